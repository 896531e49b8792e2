// Package keepawake keeps a Mac from idle sleep while it holds a studio job (NSProcessInfo
// beginActivityWithOptions:reason: with NSActivityIdleSystemSleepDisabled), and lets it sleep
// again when idle. Elsewhere it does nothing.
package keepawake
