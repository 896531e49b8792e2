// Package queue is the queue and resume region of the main window: the list of jobs waiting,
// running and just ended under the canvas (List), and the offer of the jobs earlier sessions left
// unfinished (Offer), one row per job, each resumed or discarded on its own. It touches no other
// region's widgets: the shell gives it the jobs to show and what its buttons do (ListActions,
// OfferActions).
package queue
