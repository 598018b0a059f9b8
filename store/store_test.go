package store_test

import (
	"context"
	"fmt"
	"math"
	neturl "net/url"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/ragd/ragd"
	"github.com/ragd/ragd/internal/dbtest"
	"github.com/ragd/ragd/migrations"
	"github.com/ragd/ragd/store"
)

// unit returns a dbtest.Dim-dimensional unit vector leaning towards axis a (and a little towards b),
// so nearest-neighbour order is known in advance.
func unit(a, b int, lean float64) []float32 {
	v := make([]float32, dbtest.Dim)
	v[a] = float32(math.Cos(lean))
	v[b] = float32(math.Sin(lean))
	return v
}

func version(key, hash string, texts ...string) ragd.NewVersion {
	v := ragd.NewVersion{SourceKey: key, Format: "text", Title: "T " + key, ContentHash: hash, Bytes: 10}
	for i, s := range texts {
		v.Chunks = append(v.Chunks, ragd.Chunk{Text: s, CharStart: i * 10, CharEnd: i*10 + len(s), Tokens: 3})
	}
	return v
}

func setup(t *testing.T) (context.Context, *store.Store) {
	t.Helper()
	return context.Background(), store.New(dbtest.TestTx(t))
}

func TestOpenMigratesAndChecksDimension(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := dbtest.NewDatabase(t)

	s, err := store.Open(ctx, store.Config{URL: url, EmbeddingDim: dbtest.Dim})
	require.NoError(t, err, "an up-to-date schema opens without migrating")
	s.Close()

	_, err = store.Open(ctx, store.Config{URL: url, EmbeddingDim: 768})
	require.ErrorContains(t, err, "stores 384-dimensional embeddings but the embedding model gives 768")

	_, err = store.Open(ctx, store.Config{URL: url, Schema: "fresh", EmbeddingDim: 8})
	require.ErrorContains(t, err, "schema is behind", "a new schema without Migrate is refused")

	s, err = store.Open(ctx, store.Config{URL: url, Schema: "fresh", EmbeddingDim: 8, Migrate: true})
	require.NoError(t, err, "migrations run from empty in a new schema")
	defer s.Close()
	res, err := s.SaveVersions(ctx, []ragd.NewVersion{version("k", "h", "in a schema")})
	require.NoError(t, err)
	require.Equal(t, ragd.Created, res[0].Status)
}

// A schema a newer ragd migrated is refused, whether this one would migrate or not: it never
// migrates down, and its turns would skip what the newer schema keeps with a conversation (an
// older binary's turn left a conversation without the sticky invariant it stated).
func TestOpenRefusesANewerSchema(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := dbtest.NewDatabase(t)
	owner, err := pgx.Connect(ctx, url)
	require.NoError(t, err)
	defer owner.Close(ctx)
	var latest int
	require.NoError(t, owner.QueryRow(ctx, "UPDATE schema_version SET version = version + 1 RETURNING version - 1").Scan(&latest))

	for _, cfg := range []store.Config{
		{URL: url, EmbeddingDim: dbtest.Dim, Migrate: true},
		{URL: url, EmbeddingDim: dbtest.Dim},
		{URL: dbtest.AppURL(t, url), EmbeddingDim: dbtest.Dim, Migrate: true},
		{URL: dbtest.AppURL(t, url), OwnerURL: url, EmbeddingDim: dbtest.Dim, Migrate: true},
	} {
		s, err := store.Open(ctx, cfg)
		if err == nil {
			s.Close()
		}
		require.ErrorIs(t, err, migrations.ErrAhead, "migrate %v, owner %q", cfg.Migrate, cfg.OwnerURL)
		require.ErrorContains(t, err, fmt.Sprintf("at version %d; this ragd knows %d", latest+1, latest))
	}
	require.ErrorIs(t, migrations.Migrate(ctx, owner, migrations.Options{EmbeddingDim: dbtest.Dim}), migrations.ErrAhead,
		"in its own words, not tern's")
	var v int
	require.NoError(t, owner.QueryRow(ctx, "SELECT version FROM schema_version").Scan(&v))
	require.Equal(t, latest+1, v, "the version is left as it was")
}

func TestSaveVersions(t *testing.T) {
	t.Parallel()
	ctx, s := setup(t)

	res, err := s.SaveVersions(ctx, []ragd.NewVersion{version("a", "h1", "one", "two"), version("b", "h1", "bee")})
	require.NoError(t, err)
	require.Equal(t, ragd.Created, res[0].Status)
	require.Equal(t, 1, res[0].Version)
	docA := res[0].DocID

	// Unchanged content is a no-op: same id, same version, no new rows.
	seqBefore, err := s.MaxSeq(ctx)
	require.NoError(t, err)
	res, err = s.SaveVersions(ctx, []ragd.NewVersion{version("a", "h1", "one", "two")})
	require.NoError(t, err)
	require.Equal(t, ragd.SaveResult{DocID: docA, Version: 1, Status: ragd.Unchanged}, res[0])
	seqAfter, err := s.MaxSeq(ctx)
	require.NoError(t, err)
	require.Equal(t, seqBefore, seqAfter)

	old, err := s.VersionChunks(ctx, docA, 1)
	require.NoError(t, err)
	require.Len(t, old, 2)

	// Changed content makes version 2; version 1's chunks leave search but stay readable.
	res, err = s.SaveVersions(ctx, []ragd.NewVersion{version("a", "h2", "uno")})
	require.NoError(t, err)
	require.Equal(t, ragd.SaveResult{DocID: docA, Version: 2, Status: ragd.Updated}, res[0])

	got, err := s.Chunks(ctx, []int64{old[1].ID, old[0].ID})
	require.NoError(t, err)
	require.Equal(t, []string{"two", "one"}, []string{got[0].Text, got[1].Text}, "order of ids is kept")
	require.False(t, got[0].Active)
	require.Greater(t, got[0].Seq, old[1].Seq, "deactivation takes a new sequence number")

	vs, err := s.Versions(ctx, docA)
	require.NoError(t, err)
	require.Len(t, vs, 2)
	require.Equal(t, []string{"h1", "h2"}, []string{vs[0].ContentHash, vs[1].ContentHash})
	require.Equal(t, 1, vs[1].Chunks)

	d, err := s.Document(ctx, docA)
	require.NoError(t, err)
	require.Equal(t, 2, d.Version)

	cur, err := s.Current(ctx, []string{"a", "b", "missing"})
	require.NoError(t, err)
	require.Len(t, cur, 2)
	require.Equal(t, ragd.CurrentVersion{DocID: docA, Version: 2, Hash: "h2", Chunks: 1}, cur["a"])
	require.Equal(t, "h1", cur["b"].Hash)
}

func TestSaveVersionsRejectsBadInput(t *testing.T) {
	t.Parallel()
	ctx, s := setup(t)
	for name, vs := range map[string][]ragd.NewVersion{
		"duplicate key": {version("a", "h", "x"), version("a", "h", "y")},
		"no chunks":     {version("a", "h")},
		"empty key":     {version("", "h", "x")},
	} {
		_, err := s.SaveVersions(ctx, vs)
		require.ErrorIs(t, err, ragd.ErrInvalid, name)
	}
	n, err := s.CountDocuments(ctx)
	require.NoError(t, err)
	require.Zero(t, n, "nothing partial was written")
}

func TestDeleteDocument(t *testing.T) {
	t.Parallel()
	ctx, s := setup(t)
	res, err := s.SaveVersions(ctx, []ragd.NewVersion{version("a", "h", "x")})
	require.NoError(t, err)
	id := res[0].DocID

	require.NoError(t, s.DeleteDocument(ctx, id))
	require.NoError(t, s.DeleteDocument(ctx, id), "deleting twice is a no-op")
	require.ErrorIs(t, s.DeleteDocument(ctx, uuid.New()), ragd.ErrNotFound)

	cs, err := s.VersionChunks(ctx, id, 1)
	require.NoError(t, err)
	require.False(t, cs[0].Active)
	require.Equal(t, "x", cs[0].Text, "a deleted document's chunks stay readable")

	// Ingesting it again brings it back as a new version.
	res, err = s.SaveVersions(ctx, []ragd.NewVersion{version("a", "h", "x")})
	require.NoError(t, err)
	require.Equal(t, ragd.SaveResult{DocID: id, Version: 2, Status: ragd.Updated}, res[0])
}

func TestSearchVector(t *testing.T) {
	t.Parallel()
	ctx, s := setup(t)
	a, b := version("a", "h", "a0", "a1"), version("b", "h", "b0")
	a.Chunks[0].Embedding = unit(0, 1, 0.1) // nearest to axis 0
	a.Chunks[1].Embedding = unit(0, 1, 0.5)
	b.Chunks[0].Embedding = unit(0, 1, 0.3)
	res, err := s.SaveVersions(ctx, []ragd.NewVersion{a, b, version("c", "h", "no vector")})
	require.NoError(t, err)

	q := unit(0, 1, 0)
	hits, err := s.SearchVector(ctx, q, 10, nil)
	require.NoError(t, err)
	texts := chunkTexts(t, ctx, s, hits)
	require.Equal(t, []string{"a0", "b0", "a1"}, texts, "cosine order; chunks without vectors are not returned")
	require.InDelta(t, math.Cos(0.1), hits[0].Score, 1e-5, "score is cosine similarity")
	require.Equal(t, []int{1, 2, 3}, []int{hits[0].Rank, hits[1].Rank, hits[2].Rank})

	hits, err = s.SearchVector(ctx, q, 10, []uuid.UUID{res[0].DocID})
	require.NoError(t, err)
	require.Equal(t, []string{"a0", "a1"}, chunkTexts(t, ctx, s, hits), "document filter")

	hits, err = s.SearchVector(ctx, q, 1, nil)
	require.NoError(t, err)
	require.Len(t, hits, 1)

	_, err = s.SearchVector(ctx, q, 0, nil)
	require.ErrorIs(t, err, ragd.ErrInvalid)

	require.NoError(t, s.DeleteDocument(ctx, res[1].DocID))
	hits, err = s.SearchVector(ctx, q, 10, nil)
	require.NoError(t, err)
	require.Equal(t, []string{"a0", "a1"}, chunkTexts(t, ctx, s, hits), "deleted documents leave search")
}

func chunkTexts(t *testing.T, ctx context.Context, s *store.Store, hits []ragd.Hit) []string {
	t.Helper()
	ids := make([]int64, len(hits))
	for i, h := range hits {
		ids[i] = h.ChunkID
	}
	cs, err := s.Chunks(ctx, ids)
	require.NoError(t, err)
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.Text
	}
	return out
}

func TestChunkChangesAndEmbeddings(t *testing.T) {
	t.Parallel()
	ctx, s := setup(t)
	_, err := s.SaveVersions(ctx, []ragd.NewVersion{version("a", "h1", "one", "two")})
	require.NoError(t, err)
	_, err = s.SaveVersions(ctx, []ragd.NewVersion{version("a", "h2", "three")})
	require.NoError(t, err)

	changes, err := s.ChunkChanges(ctx, 0, 100)
	require.NoError(t, err)
	// The two old chunks took new sequence numbers when they left search, so the catch-up sees
	// the new chunk and the two deactivations, in sequence order.
	require.Len(t, changes, 3)
	for i := 1; i < len(changes); i++ {
		require.Greater(t, changes[i].Seq, changes[i-1].Seq)
	}
	active := map[string]bool{}
	for _, c := range changes {
		if c.Active {
			active[c.Text] = true
			require.Equal(t, "T a", c.Title)
		} else {
			require.Empty(t, c.Text)
		}
	}
	require.Equal(t, map[string]bool{"three": true}, active)

	limited, err := s.ChunkChanges(ctx, changes[0].Seq, 1)
	require.NoError(t, err)
	require.Equal(t, []ragd.ChunkChange{changes[1]}, limited)

	missing, err := s.ChunksWithoutEmbedding(ctx, 10)
	require.NoError(t, err)
	require.Len(t, missing, 1)
	require.NoError(t, s.SetEmbeddings(ctx, []int64{missing[0].ID}, [][]float32{unit(2, 3, 0)}))
	missing, err = s.ChunksWithoutEmbedding(ctx, 10)
	require.NoError(t, err)
	require.Empty(t, missing)
}

// Login tells a login that is only a member of ragd_app from one that could get past row-level
// security or the append-only citations.
func TestLogin(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := dbtest.NewDatabase(t)

	s, err := store.Open(ctx, store.Config{URL: url, EmbeddingDim: dbtest.Dim})
	require.NoError(t, err)
	l, err := s.Login(ctx)
	s.Close()
	require.NoError(t, err)
	require.Contains(t, l.Privileged, "is a superuser")

	s, err = store.Open(ctx, store.Config{URL: dbtest.AppURL(t, url), OwnerURL: url, EmbeddingDim: dbtest.Dim, Migrate: true})
	require.NoError(t, err, "the owner migrates, the login serves")
	defer s.Close()
	l, err = s.Login(ctx)
	require.NoError(t, err)
	require.Equal(t, "ragd_test_login", l.User)
	require.Empty(t, l.Privileged)
	res, err := s.SaveVersions(ctx, []ragd.NewVersion{version("k", "h", "as the login")})
	require.NoError(t, err)
	require.Equal(t, ragd.Created, res[0].Status)

	_, err = store.Open(ctx, store.Config{URL: dbtest.AppURL(t, url), Schema: "fresh", EmbeddingDim: dbtest.Dim, Migrate: true})
	require.ErrorContains(t, err, "may not migrate", "the login alone cannot create ragd's tables")

	// On a schema with nothing pending, the login alone opens the store though it may migrate
	// nothing (serve's default, auto-migrate, without --migrate-database-url).
	alone, err := store.Open(ctx, store.Config{URL: dbtest.AppURL(t, url), EmbeddingDim: dbtest.Dim, Migrate: true})
	require.NoError(t, err)
	alone.Close()
}

// An owner that may not create or grant ragd_app (no CREATEROLE, no admin option on it) cannot
// migrate: the error says what the owner lacks and how to give it, not to migrate as the owner
// (which it is: the README's own-PostgreSQL steps with a plain database owner ended there).
func TestOwnerWithoutRolePrivilegeIsToldWhatItLacks(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := dbtest.NewDatabase(t)
	admin, err := pgx.Connect(ctx, url)
	require.NoError(t, err)
	defer admin.Close(ctx)
	// Roles belong to the server: the owner is shared by every run, and never a member of
	// ragd_app, since the migration that would grant it fails.
	_, err = admin.Exec(ctx, `DO $$ BEGIN
		CREATE ROLE ragd_test_plain_owner LOGIN NOSUPERUSER NOCREATEROLE NOBYPASSRLS;
		EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL; END $$`)
	require.NoError(t, err)
	var db string
	require.NoError(t, admin.QueryRow(ctx, "SELECT current_database()").Scan(&db))
	_, err = admin.Exec(ctx, "GRANT CREATE ON DATABASE "+pgx.Identifier{db}.Sanitize()+" TO ragd_test_plain_owner")
	require.NoError(t, err)
	u, err := neturl.Parse(url)
	require.NoError(t, err)
	u.User = neturl.User("ragd_test_plain_owner")

	_, err = store.Open(ctx, store.Config{URL: dbtest.AppURL(t, url), OwnerURL: u.String(), Schema: "owned",
		EmbeddingDim: dbtest.Dim, Migrate: true})
	require.ErrorContains(t, err, "the login ragd_test_plain_owner may not create or grant the role ragd_app")
	require.ErrorContains(t, err, "ALTER ROLE ragd_test_plain_owner CREATEROLE")
	require.ErrorContains(t, err, "GRANT ragd_app TO ragd_test_plain_owner WITH ADMIN OPTION")
	require.NotContains(t, err.Error(), "migrate as the owner")
}
