// Command the-loop is the-loop's CLI and, as `the-loop serve`, its service.
package main

import "os"

func main() {
	os.Exit(Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
