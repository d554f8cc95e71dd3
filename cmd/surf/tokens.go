package main

// errTokenFlag is the error of a flag that used to take a token as its
// value.
func errTokenFlag(c *command, flag, instead string) error {
	return usagef(c, "%s no longer takes a token: a flag's value shows in ps, where every local user can read it; %s", flag, instead)
}
