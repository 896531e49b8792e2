package keeping

import (
	"easel/app/unfinished"

	"easel/ui/queue"
)

// OfferResume shows what earlier sessions left unfinished (queue.Offer): one row per job, each
// resumed (queued from its checkpoint) or discarded on its own, or all at once; Later (or Esc)
// keeps them for the next launch. Nothing shows when nothing was left.
func (r *Region) OfferResume() {
	store := r.shell.Unfinished()
	if store == nil {
		return
	}
	left, err := store.List()
	if err != nil {
		r.say("%v", err)
	}
	o := queue.NewOffer(left, queue.OfferActions{
		Resume:  r.resume,
		Where:   r.where,
		Problem: func(err error) { r.say("%v", err) },
	}, r.shell.Window)
	if o == nil {
		return
	}
	r.kept.mu.Lock()
	r.kept.offer = o
	r.kept.mu.Unlock()
	r.shell.Show(o.Dialog)
}

// Offer is the resume offer last shown (nil: none was).
func (r *Region) Offer() *queue.Offer {
	r.kept.mu.Lock()
	defer r.kept.mu.Unlock()
	return r.kept.offer
}

// where names where a kept job was rendering.
func (r *Region) where(p *unfinished.Pending) string {
	if p.Where == "" {
		return r.shell.Here
	}
	return p.Where
}

// resume queues the pending jobs in their order, each from its checkpoint (a damaged checkpoint:
// from the start; the file stays for inspection).
func (r *Region) resume(left []*unfinished.Pending) {
	for _, p := range left {
		if p.Problem != nil {
			p.Checkpoint = nil
		}
		job, k, err := p.Job(r.fingerprint(p.Draft.Model))
		if err != nil {
			r.say("%s cannot be resumed: %v", p.Label, err)
			continue
		}
		r.shell.Submit(p.Draft, p.Seed, job, k)
	}
}
