package store

import (
	"context"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/stretchr/testify/require"

	"github.com/ragd/ragd/internal/dbtest"
)

// The pool's connections encode uuid.UUID as its 16 bytes (not through its driver.Valuer), and
// ids, arrays of ids and NULLs go to PostgreSQL and back unchanged, in the binary format and in
// the text format (the simple protocol), which keeps pgx's own way.
func TestUUIDCodec(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, err := Open(ctx, Config{URL: dbtest.NewDatabase(t), EmbeddingDim: dbtest.Dim})
	require.NoError(t, err)
	defer s.Close()

	m := pgtype.NewMap()
	registerUUID(m)
	require.IsType(t, encodeUUID{}, m.PlanEncode(pgtype.UUIDOID, pgtype.BinaryFormatCode, uuid.UUID{}))
	require.IsType(t, scanUUID{}, m.PlanScan(pgtype.UUIDOID, pgtype.BinaryFormatCode, new(uuid.UUID)))

	v7, err := uuid.NewV7()
	require.NoError(t, err)
	ids := []uuid.UUID{uuid.Nil, uuid.New(), v7, uuid.MustParse("ffffffff-ffff-ffff-ffff-ffffffffffff")}
	for _, mode := range []pgx.QueryExecMode{pgx.QueryExecModeCacheStatement, pgx.QueryExecModeSimpleProtocol} {
		for _, id := range ids {
			var (
				back uuid.UUID
				text string
				null *uuid.UUID
				kept = ids[1]
				ptrs []*uuid.UUID
			)
			err := s.pool.QueryRow(ctx, `SELECT $1::uuid, $1::uuid::text, NULL::uuid, NULL::uuid, ARRAY[$1::uuid, NULL]`,
				mode, id).Scan(&back, &text, &null, &kept, &ptrs)
			require.NoError(t, err, mode)
			require.Equal(t, id, back, mode)
			require.Equal(t, id.String(), text, mode)
			require.Nil(t, null, mode)
			require.Equal(t, ids[1], kept, "NULL leaves a uuid.UUID as it was, as its own Scan does")
			require.Len(t, ptrs, 2)
			require.Equal(t, id, *ptrs[0], mode)
			require.Nil(t, ptrs[1], mode)
		}
	}
	// Arrays of ids (pgx's simple protocol cannot send them, with or without the codec).
	var arr []uuid.UUID
	var texts []string
	require.NoError(t, s.pool.QueryRow(ctx, `SELECT $1::uuid[], $1::uuid[]::text[]`, ids).Scan(&arr, &texts))
	require.Equal(t, ids, arr)
	for i, id := range ids {
		require.Equal(t, id.String(), texts[i])
	}
	var eq bool
	require.NoError(t, s.pool.QueryRow(ctx, `SELECT $1::uuid = 'ffffffff-ffff-ffff-ffff-ffffffffffff'`, ids[3]).Scan(&eq))
	require.True(t, eq, "the bytes PostgreSQL gets are the id's")
}
