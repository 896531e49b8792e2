// Package studio spreads a batch of images over several Easels ("a studio of Macs") on NATS
// JetStream: a hub runs the embedded nats-server with JetStream on disk, workers pull one job at
// a time when idle, and a client publishes one self-contained job per image and writes each
// result once. The package is the transport only: a job's request is opaque bytes that the
// caller's Renderer (app/cli's, over the real pipeline) understands. It writes no scheduler and
// no queue protocol of its own: delivery, redelivery after a silent worker, hand-back (Nak),
// at-most-3 deliveries, back-pressure and de-duplication are JetStream's.
//
// It imports no Fyne: the CLI, the A1111 server and the window all use it.
package studio
