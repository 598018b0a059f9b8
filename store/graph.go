package store

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/ragd/ragd"
	"github.com/ragd/ragd/kg"
)

// SaveGraph records the entities of chunks and adds their co-occurrence to the graph:
// entities[i] belongs to chunkIDs[i]. Every entity of a chunk is recorded against it (for
// EntityChunks); only the first maxPerChunk are linked by edges (see kg.Edges), whose weights add
// up across calls. It runs in one transaction, or in a savepoint of the caller's when the store
// wraps one, and in at most four statements however many chunks there are.
//
// A chunk's co-occurrence is counted once: a chunk whose entities were all recorded already (a
// retried batch, say) adds no weight. Chunks never change, so neither do their entities.
func (s *Store) SaveGraph(ctx context.Context, chunkIDs []int64, entities [][]kg.Entity, maxPerChunk int) error {
	if len(chunkIDs) != len(entities) {
		return ragd.Invalidf("entities", "%d chunk ids for %d entity lists", len(chunkIDs), len(entities))
	}
	seen := make(map[int64]bool, len(chunkIDs))
	for _, id := range chunkIDs {
		if seen[id] {
			return ragd.Invalidf("chunk_ids", "chunk %d appears twice", id)
		}
		seen[id] = true
	}
	kinds := make(map[string]kg.Kind)
	for _, es := range entities {
		for _, e := range es {
			if e.Name == "" {
				return ragd.Invalidf("entities", "an entity has an empty name")
			}
			if _, ok := kinds[e.Name]; !ok {
				kinds[e.Name] = e.Kind
			}
		}
	}
	if len(kinds) == 0 {
		return nil
	}
	if ragd.PrincipalOf(ctx).All {
		// Rows take the connection's tenant, and 'all' is none: the graph would land in the
		// default tenant's, linked to other tenants' chunks.
		return errors.New("store: a graph is saved for one tenant, not for every tenant at once")
	}
	return s.InTx(ctx, func(tx *Store) error {
		ids, err := tx.entityIDs(ctx, kinds)
		if err != nil {
			return err
		}
		fresh, err := tx.saveMentions(ctx, chunkIDs, entities, ids)
		if err != nil {
			return err
		}
		return tx.addEdges(ctx, kg.Edges(fresh, maxPerChunk), ids)
	})
}

// entityIDs returns the ids of the named entities, creating the missing ones with the given
// kinds. An entity keeps the kind it was first recorded with.
//
// Most entities of an ingest batch exist already, so they are read first: an upsert of every
// name would write a new row version for each of them. The missing ones are inserted with
// ON CONFLICT DO UPDATE, which returns the row even when a concurrent ingest inserted the same
// name after the read (DO NOTHING would return nothing for it). Inserting in name order makes
// concurrent batches lock shared names in the same order, so they wait instead of deadlocking.
func (s *Store) entityIDs(ctx context.Context, kinds map[string]kg.Kind) (map[string]int64, error) {
	names := make([]string, 0, len(kinds))
	for n := range kinds {
		names = append(names, n)
	}
	ids := make(map[string]int64, len(kinds))
	if err := s.scanIDs(ctx, ids, `SELECT id, name FROM entities WHERE name = ANY($1) AND tenant_id = $2`, names, tenantOf(ctx)); err != nil {
		return nil, fmt.Errorf("store: reading entities: %w", err)
	}
	var missing, missingKinds []string
	for _, n := range names {
		if _, ok := ids[n]; !ok {
			missing = append(missing, n)
			missingKinds = append(missingKinds, string(kinds[n]))
		}
	}
	if len(missing) == 0 {
		return ids, nil
	}
	err := s.scanIDs(ctx, ids, `
		INSERT INTO entities (name, kind)
		SELECT name, kind FROM unnest($1::text[], $2::text[]) AS new(name, kind) ORDER BY name
		ON CONFLICT (tenant_id, name) DO UPDATE SET name = excluded.name
		RETURNING id, name`, missing, missingKinds)
	if err != nil {
		return nil, fmt.Errorf("store: adding entities: %w", err)
	}
	return ids, nil
}

// scanIDs runs a query returning (id, name) rows into ids.
func (s *Store) scanIDs(ctx context.Context, ids map[string]int64, sql string, args ...any) error {
	rows, err := s.db.Query(ctx, sql, args...)
	if err != nil {
		return err
	}
	var id int64
	var name string
	_, err = pgx.ForEachRow(rows, []any{&id, &name}, func() error {
		ids[name] = id
		return nil
	})
	return err
}

// saveMentions records which entities each chunk mentions and returns the entity lists of the
// chunks recorded for the first time: those whose every row is new.
func (s *Store) saveMentions(ctx context.Context, chunkIDs []int64, entities [][]kg.Entity, ids map[string]int64) ([][]kg.Entity, error) {
	var chunkCol, entityCol []int64
	rowsOf := make(map[int64]int, len(chunkIDs))
	for i, es := range entities {
		seen := make(map[string]bool, len(es))
		for _, e := range es {
			if !seen[e.Name] {
				seen[e.Name] = true
				chunkCol = append(chunkCol, chunkIDs[i])
				entityCol = append(entityCol, ids[e.Name])
			}
		}
		rowsOf[chunkIDs[i]] = len(seen)
	}
	rows, err := s.db.Query(ctx, `
		INSERT INTO chunk_entities (chunk_id, entity_id)
		SELECT * FROM unnest($1::bigint[], $2::bigint[]) ORDER BY 2, 1
		ON CONFLICT DO NOTHING
		RETURNING chunk_id`, chunkCol, entityCol)
	if err != nil {
		return nil, fmt.Errorf("store: recording chunk entities: %w", err)
	}
	inserted := make(map[int64]int, len(chunkIDs))
	var id int64
	_, err = pgx.ForEachRow(rows, []any{&id}, func() error {
		inserted[id]++
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("store: recording chunk entities: %w", err)
	}
	fresh := make([][]kg.Entity, 0, len(chunkIDs))
	for i, id := range chunkIDs {
		if n := rowsOf[id]; n > 0 && inserted[id] == n {
			fresh = append(fresh, entities[i])
		}
	}
	return fresh, nil
}

// addEdges adds edge weights, in (src, dst) order so that concurrent batches lock shared edges
// in the same order.
func (s *Store) addEdges(ctx context.Context, edges []kg.Edge, ids map[string]int64) error {
	if len(edges) == 0 {
		return nil
	}
	src := make([]int64, len(edges))
	dst := make([]int64, len(edges))
	weight := make([]float32, len(edges))
	for i, e := range edges {
		src[i], dst[i], weight[i] = ids[e.Src], ids[e.Dst], float32(e.Weight)
	}
	_, err := s.db.Exec(ctx, `
		INSERT INTO edges (src, dst, weight)
		SELECT * FROM unnest($1::bigint[], $2::bigint[], $3::real[]) ORDER BY 1, 2
		ON CONFLICT (src, dst) DO UPDATE SET weight = edges.weight + excluded.weight`, src, dst, weight)
	if err != nil {
		return fmt.Errorf("store: adding edges: %w", err)
	}
	return nil
}

// Neighbours returns the 1-hop neighbours of the named entities, heaviest edge first (ties by
// name), at most limit. The named entities themselves are left out, and a neighbour of several
// of them comes once, through its heaviest edge (ties by the name it is reached from). Unknown
// names have no neighbours.
func (s *Store) Neighbours(ctx context.Context, names []string, limit int) ([]ragd.Neighbour, error) {
	if limit < 1 {
		return nil, ragd.Invalidf("limit", "must be at least 1, got %d", limit)
	}
	if len(names) == 0 {
		return nil, nil
	}
	// The top limit overall are among the top limit of each named entity, so each is cut there
	// before the join: a hub entity with thousands of edges costs a top-N sort, not a merge.
	rows, err := s.db.Query(ctx, `
		WITH asked AS (SELECT id, name FROM entities WHERE name = ANY($1))
		SELECT name, kind, weight, via FROM (
			SELECT DISTINCT ON (top.id) top.name, top.kind, top.weight, a.name AS via
			FROM asked a
			CROSS JOIN LATERAL (
				SELECT n.id, n.name, n.kind, e.weight::float8 AS weight
				FROM edges e JOIN entities n ON n.id = e.dst
				WHERE e.src = a.id AND e.dst NOT IN (SELECT id FROM asked)
				ORDER BY e.weight DESC, n.name
				LIMIT $2
			) top
			ORDER BY top.id, top.weight DESC, a.name
		) best
		ORDER BY weight DESC, name
		LIMIT $2`, names, limit)
	if err != nil {
		return nil, fmt.Errorf("store: reading neighbours: %w", err)
	}
	ns, err := pgx.CollectRows(rows, pgx.RowToStructByPos[ragd.Neighbour])
	if err != nil {
		return nil, fmt.Errorf("store: reading neighbours: %w", err)
	}
	return ns, nil
}

// entityChunkWindow bounds the chunks EntityChunks considers per entity: its newest active ones.
// A turn's cost then stays bounded however many chunks mention a common entity; ranking is
// exact for every entity mentioned in fewer chunks than this.
const entityChunkWindow = 1000

// EntityChunks returns up to limit active chunks that mention any of the named entities, by id:
// chunks that mention more of them first, then newer chunks (higher ids).
func (s *Store) EntityChunks(ctx context.Context, names []string, limit int) ([]int64, error) {
	if limit < 1 {
		return nil, ragd.Invalidf("limit", "must be at least 1, got %d", limit)
	}
	if len(names) == 0 {
		return nil, nil
	}
	rows, err := s.db.Query(ctx, `
		SELECT m.chunk_id
		FROM entities e
		CROSS JOIN LATERAL (
			SELECT ce.chunk_id
			FROM chunk_entities ce JOIN chunks c ON c.id = ce.chunk_id
			WHERE ce.entity_id = e.id AND c.active
			ORDER BY ce.chunk_id DESC
			LIMIT $3
		) m
		WHERE e.name = ANY($1)
		GROUP BY m.chunk_id
		ORDER BY count(*) DESC, m.chunk_id DESC
		LIMIT $2`, names, limit, entityChunkWindow)
	if err != nil {
		return nil, fmt.Errorf("store: reading entity chunks: %w", err)
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	if err != nil {
		return nil, fmt.Errorf("store: reading entity chunks: %w", err)
	}
	return ids, nil
}

// GraphCoverage counts the active chunks and those of them with entities recorded: a store
// whose chunks were ingested without the graph has chunks and no entities.
func (s *Store) GraphCoverage(ctx context.Context) (active, withEntities int64, err error) {
	err = s.db.QueryRow(ctx, `
		SELECT count(*), count(*) FILTER (WHERE EXISTS (SELECT 1 FROM chunk_entities ce WHERE ce.chunk_id = c.id))
		FROM chunks c WHERE c.active`).Scan(&active, &withEntities)
	if err != nil {
		return 0, 0, fmt.Errorf("store: counting graph coverage: %w", err)
	}
	return active, withEntities, nil
}

// ChunksWithoutEntities returns up to limit active chunks of ctx's tenant with id above after
// that have no entity recorded, by id, with their titles: what building the graph after ingest
// must read. Chunks without any entity come back on every call, so callers page by id.
func (s *Store) ChunksWithoutEntities(ctx context.Context, after int64, limit int) ([]ragd.Chunk, error) {
	rows, err := s.db.Query(ctx, chunkSelect+`
		WHERE c.active AND c.id > $1 AND c.tenant_id = $3 AND NOT EXISTS (SELECT 1 FROM chunk_entities ce WHERE ce.chunk_id = c.id)
		ORDER BY c.id LIMIT $2`, after, limit, tenantOf(ctx))
	if err != nil {
		return nil, fmt.Errorf("store: reading chunks without entities: %w", err)
	}
	cs, err := pgx.CollectRows(rows, scanChunk)
	if err != nil {
		return nil, fmt.Errorf("store: reading chunks without entities: %w", err)
	}
	return cs, nil
}
