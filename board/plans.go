package board

import (
	"context"
	"errors"
	"fmt"
	"sort"

	"github.com/nats-io/nats.go/jetstream"
)

// PlansBucket holds the records of planners (package board/plan): one
// key per plan, its ledgers, rounds and state as JSON.
const PlansBucket = "surf_plans"

// ErrPlanConflict is returned by PutPlan when the plan's record changed
// since the revision given: another writer got there first.
var ErrPlanConflict = errors.New("the plan's record changed meanwhile")

// ErrNoPlan is returned for a plan id the board does not hold.
var ErrNoPlan = errors.New("no such plan")

// plans is the plans bucket, created the first time it is needed.
func (b *Board) plans(ctx context.Context) (jetstream.KeyValue, error) {
	b.plansMu.Lock()
	defer b.plansMu.Unlock()
	if b.plansKV != nil {
		return b.plansKV, nil
	}
	err := retry(ctx, func(ctx context.Context) error {
		kv, err := b.js.KeyValue(ctx, PlansBucket)
		if errors.Is(err, jetstream.ErrBucketNotFound) {
			r, rerr := b.replicas(ctx)
			if rerr != nil {
				return rerr
			}
			kv, err = b.js.CreateOrUpdateKeyValue(ctx, plansConfig(r))
		}
		if err != nil {
			return fmt.Errorf("the plans bucket: %w", err)
		}
		b.plansKV = kv
		return nil
	})
	return b.plansKV, err
}

// GetPlan returns the record of plan id and its revision.
func (b *Board) GetPlan(ctx context.Context, id string) ([]byte, uint64, error) {
	if err := checkID(id); err != nil {
		return nil, 0, fmt.Errorf("%w: %v", ErrNoPlan, err)
	}
	kv, err := b.plans(ctx)
	if err != nil {
		return nil, 0, err
	}
	var data []byte
	var rev uint64
	err = retry(ctx, func(ctx context.Context) error {
		e, err := kv.Get(ctx, id)
		if errors.Is(err, jetstream.ErrKeyNotFound) {
			return permanent(fmt.Errorf("%w: %s", ErrNoPlan, id))
		}
		if err != nil {
			return err
		}
		data, rev = e.Value(), e.Revision()
		return nil
	})
	return data, rev, err
}

// PutPlan writes plan id's record by compare-and-set: rev 0 creates it
// (ErrPlanConflict when it exists), any other rev replaces that revision
// (ErrPlanConflict when it is not the current one). It returns the new
// revision.
func (b *Board) PutPlan(ctx context.Context, id string, data []byte, rev uint64) (uint64, error) {
	if err := checkID(id); err != nil {
		return 0, err
	}
	kv, err := b.plans(ctx)
	if err != nil {
		return 0, err
	}
	var out uint64
	err = retry(ctx, func(ctx context.Context) error {
		var err error
		if rev == 0 {
			out, err = kv.Create(ctx, id, data)
		} else {
			out, err = kv.Update(ctx, id, data, rev)
		}
		if errors.Is(err, jetstream.ErrKeyExists) || errors.Is(err, jetstream.ErrKeyRevisionMismatch) {
			// a retried write that did land reads back as ours
			if e, gerr := kv.Get(ctx, id); gerr == nil && string(e.Value()) == string(data) {
				out = e.Revision()
				return nil
			}
			return permanent(fmt.Errorf("plan %s: %w", id, ErrPlanConflict))
		}
		return err
	})
	return out, err
}

// ListPlans returns the ids of the plans on the board, sorted.
func (b *Board) ListPlans(ctx context.Context) ([]string, error) {
	kv, err := b.plans(ctx)
	if err != nil {
		return nil, err
	}
	var ids []string
	err = retry(ctx, func(ctx context.Context) error {
		l, err := kv.ListKeys(ctx)
		if err != nil {
			return err
		}
		ids = ids[:0]
		for k := range l.Keys() {
			ids = append(ids, k)
		}
		return nil
	})
	if errors.Is(err, jetstream.ErrNoKeysFound) {
		return nil, nil
	}
	sort.Strings(ids)
	return ids, err
}

// plansConfig is the plans bucket's configuration with r replicas.
func plansConfig(r int) jetstream.KeyValueConfig {
	return jetstream.KeyValueConfig{
		Bucket: PlansBucket, Description: "surf plans: ledgers and rounds", History: 1,
		Storage: jetstream.FileStorage, Replicas: r,
	}
}
