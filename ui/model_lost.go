package ui

import (
	"easel/app/jobs"
	"easel/engine/mmapfile"
)

// modelLost reports a job stopped because the model file changed or went away while it was in
// use, and offers to choose the model again (ui/setup's ModelLost). The queue goes on; the jobs
// behind this one fail the same way until the file is back.
func (s *window) modelLost(j jobs.Job, fault *mmapfile.FaultError) {
	s.say("Job %d stopped: %v", j.ID, j.Err)
	s.lostModel.Offer(j.ID, fault)
}
