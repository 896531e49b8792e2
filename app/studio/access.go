package studio

import (
	"github.com/nats-io/nats-server/v2/server"
)

// Role is who connects: a worker renders jobs; a client submits them and reads the results.
// Both present the hub's token (compared by nats-server in constant time,
// subtle.ConstantTimeCompare) under their role's user name.
type Role string

const (
	RoleWorker Role = "worker"
	RoleClient Role = "client"
	// roleHub is the hub's own in-process connection that sets up the stream and buckets; its
	// password is random per run and never leaves the process.
	roleHub Role = "hub"
)

// studioUsers are the hub's users: one per role, and the hub's own. The worker's password is
// the worker token when the hub has one (a Mac given only that can render, not submit jobs or
// read results), else the token both roles share.
func studioUsers(token, workerToken, hubSecret string) []*server.User {
	if workerToken == "" {
		workerToken = token
	}
	return []*server.User{
		{Username: string(roleHub), Password: hubSecret},
		{Username: string(RoleWorker), Password: workerToken, Permissions: workerPermissions()},
		{Username: string(RoleClient), Password: token, Permissions: clientPermissions()},
	}
}

// workerPermissions are what a worker needs and no more: pull its jobs, acknowledge them, report
// progress, read inputs, write results and its own status. It cannot publish jobs, delete or
// purge the job stream, or read results (its own or others').
func workerPermissions() *server.Permissions {
	const jobs, inputs, results, workers, batches = StreamName, "OBJ_" + InputsBucket, "OBJ_" + ResultsBucket, "KV_" + WorkersBucket, "KV_" + BatchesBucket
	return &server.Permissions{
		Publish: &server.SubjectPermission{Allow: []string{
			"$JS.API.INFO",
			"$JS.API.STREAM.INFO." + jobs,
			"$JS.API.CONSUMER.CREATE." + jobs + ".>",
			"$JS.API.CONSUMER.DURABLE.CREATE." + jobs + ".>",
			"$JS.API.CONSUMER.INFO." + jobs + ".>",
			"$JS.API.CONSUMER.MSG.NEXT." + jobs + ".>",
			"$JS.ACK." + jobs + ".>",
			progressPrefix + ">",
			// inputs: read
			"$JS.API.STREAM.INFO." + inputs,
			"$JS.API.STREAM.MSG.GET." + inputs,
			"$JS.API.DIRECT.GET." + inputs + ".>",
			"$JS.API.CONSUMER.CREATE." + inputs + ".>",
			"$JS.API.CONSUMER.DELETE." + inputs + ".>",
			"$JS.API.CONSUMER.MSG.NEXT." + inputs + ".>",
			"$JS.FC." + inputs + ".>",
			// results: write (the object store reads an object's record before a put, by
			// subject; the images themselves cannot be read)
			"$JS.API.STREAM.INFO." + results,
			"$JS.API.DIRECT.GET." + results + ".$O." + ResultsBucket + ".M.>",
			"$JS.API.STREAM.PURGE." + results,
			"$O." + ResultsBucket + ".>",
			// own status
			"$JS.API.STREAM.INFO." + workers,
			"$JS.API.STREAM.MSG.GET." + workers,
			"$JS.API.DIRECT.GET." + workers + ".>",
			"$KV." + WorkersBucket + ".>",
			// batches: read (is the batch's client alive?)
			"$JS.API.STREAM.INFO." + batches,
			"$JS.API.STREAM.MSG.GET." + batches,
			"$JS.API.DIRECT.GET." + batches + ".>",
		}},
		Subscribe: &server.SubjectPermission{Allow: []string{"_INBOX.>"}},
	}
}

// clientPermissions: a client submits jobs, uploads inputs, reads and removes results, says its
// batches are alive, reads the workers' status and the advisories, and may remove jobs (its
// own cancelled batch; `easel studio cancel` and `purge`). It cannot act as a worker's
// acknowledgement or change the hub's stream settings.
func clientPermissions() *server.Permissions {
	return &server.Permissions{
		Publish: &server.SubjectPermission{
			Allow: []string{"$JS.API.>", jobsPrefix + ">", "$O.>", "$KV." + WorkersBucket + ".>", "$KV." + BatchesBucket + ".>", "$JS.FC.>"},
			Deny:  []string{"$JS.API.STREAM.CREATE.>", "$JS.API.STREAM.UPDATE.>", "$JS.API.STREAM.DELETE.>"},
		},
		Subscribe: &server.SubjectPermission{Allow: []string{"_INBOX.>", progressPrefix + ">", "$JS.EVENT.ADVISORY.>"}},
	}
}
