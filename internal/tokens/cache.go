package tokens

import (
	"strings"
	"sync"
)

// The segment cache maps segment text to its token count. It keeps two
// generations of at most cacheBytes of text each: lookups promote entries
// from the old generation to the current one, and when the current one is
// full it becomes the old one and the previous old one is dropped. Segments
// in use on every step (system prompt, task, earlier turns) stay; the rest
// ages out. Memory is bounded by about 2*cacheBytes of text plus map
// overhead.
const (
	cacheBytes      = 4 << 20
	maxCachedLength = 64 << 10 // longer segments are counted, not cached
	minCachedLength = 8        // shorter ones are cheaper to count than to hash
)

var cache struct {
	mu       sync.Mutex
	cur, old map[string]int32
	curBytes int
}

func countSegment(seg string) int {
	if len(seg) < minCachedLength || len(seg) > maxCachedLength {
		return countRaw(seg)
	}
	cache.mu.Lock()
	n, ok := cache.cur[seg]
	if !ok {
		if n, ok = cache.old[seg]; ok {
			storeLocked(seg, n)
		}
	}
	cache.mu.Unlock()
	if ok {
		return int(n)
	}
	n = int32(countRaw(seg))
	cache.mu.Lock()
	storeLocked(seg, n)
	cache.mu.Unlock()
	return int(n)
}

func storeLocked(seg string, n int32) {
	if cache.curBytes+len(seg) > cacheBytes {
		cache.old, cache.cur, cache.curBytes = cache.cur, nil, 0
	}
	if cache.cur == nil {
		cache.cur = make(map[string]int32)
	}
	if _, dup := cache.cur[seg]; !dup {
		// Clone: seg is usually a slice of a much longer string, which
		// a map key would otherwise keep alive.
		cache.cur[strings.Clone(seg)] = n
		cache.curBytes += len(seg)
	}
}

// resetCache empties the cache; benchmarks use it to measure cold counts.
func resetCache() {
	cache.mu.Lock()
	cache.cur, cache.old, cache.curBytes = nil, nil, 0
	cache.mu.Unlock()
}
