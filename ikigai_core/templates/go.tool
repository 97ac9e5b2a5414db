// The {{name}} tool: shout TEXT back in capitals.
// Build it: go build -o {{program}} {{program}}.go
// Try it: ikigai tool test {{name}} '{"text": "hi"}'
package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
)

const schema = `{"name": "{{name}}", "description": "Shout TEXT back in capitals.",
 "parameters": {"type": "object", "required": ["text"], "properties": {
   "text": {"type": "string", "description": "what to shout."},
   "times": {"type": "integer", "description": "how many times to say it.", "default": 1}}}}
`

const usage = "usage: {{program}} [--schema] < ARGUMENTS.json"

func fail(message string, status int) {
	fmt.Fprintf(os.Stderr, "{{name}}: %s\n", message)
	os.Exit(status)
}

func main() {
	if len(os.Args) > 1 {
		switch os.Args[1] {
		case "--schema":
			fmt.Print(schema)
		case "--help", "-h":
			fmt.Println(usage)
		default:
			fail(fmt.Sprintf("unexpected argument '%s'; %s", os.Args[1], usage), 2)
		}
		return
	}
	input, err := io.ReadAll(os.Stdin)
	if err != nil || len(bytes.TrimSpace(input)) == 0 {
		fail("expected a JSON object on stdin, got nothing", 1)
	}
	var args map[string]json.RawMessage
	if err := json.Unmarshal(input, &args); err != nil {
		fail("invalid JSON on stdin, or not an object: "+err.Error(), 1)
	}
	var text string
	if raw, ok := args["text"]; !ok || string(raw) == "null" {
		fail("missing required field 'text'", 1)
	} else if json.Unmarshal(raw, &text) != nil {
		fail("field 'text' must be a string", 1)
	}
	times := 1
	if raw, ok := args["times"]; ok && string(raw) != "null" && json.Unmarshal(raw, &times) != nil {
		fail("field 'times' must be an integer", 1)
	}
	var result map[string]any
	if strings.TrimSpace(text) == "" {
		result = map[string]any{"error": "text is empty: give some words to shout",
			"error_code": "EMPTY_TEXT"}
	} else {
		words := make([]string, times)
		for i := range words {
			words[i] = strings.ToUpper(text)
		}
		result = map[string]any{"output": strings.Join(words, " ")}
	}
	out, _ := json.Marshal(result)
	os.Stdout.Write(out)
}
