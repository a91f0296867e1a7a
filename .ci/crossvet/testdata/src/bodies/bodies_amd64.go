package bodies

// inAsm is defined in bodies_amd64.s; on other processors neither file is
// built.
func inAsm(x int) int

func notInAsm(x int) int // want `function notInAsm has no body`
