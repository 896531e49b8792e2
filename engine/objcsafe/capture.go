package objcsafe

// capture runs f and returns the value of a panic in it (panicked true) instead of letting the
// panic unwind past the caller: WithPool runs it inside the pool, so the pool pops before the
// panic goes on.
func capture(f func()) (value any, panicked bool) {
	defer func() {
		if r := recover(); r != nil {
			value, panicked = r, true
		}
	}()
	f()
	return nil, false
}
