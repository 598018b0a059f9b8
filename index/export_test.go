package index

import (
	"context"
	"sync"

	"github.com/blevesearch/bleve/v2"
)

// OpenTenants is how many tenants' indexes are open.
func (ix *Index) OpenTenants() int {
	open, _ := ix.OpenStats()
	return open
}

// Hold begins a read of ctx's tenant's index as every search does, and returns a search of text
// in that index (its number of hits) and the function that ends the read (once, however often
// it is called, so a test can defer it and still end the read early).
func (ix *Index) Hold(ctx context.Context) (func(text string) (int, error), func(), error) {
	s, done, err := ix.reader(ctx)
	if err != nil {
		return nil, nil, err
	}
	search := func(text string) (int, error) {
		res, err := s.bleve.SearchInContext(ctx, bleve.NewSearchRequest(textMatch(text)))
		if err != nil {
			return 0, err
		}
		return len(res.Hits), nil
	}
	return search, sync.OnceFunc(done), nil
}

// Settle waits until the evicted indexes are closed (they close in the background).
func (ix *Index) Settle() { ix.closing.Wait() }
