#!/usr/bin/env node
// The {{name}} tool: shout TEXT back in capitals.
// Try it: ikigai tool test {{name}} '{"text": "hi"}'
"use strict";
const SCHEMA = {
  name: "{{name}}",
  description: "Shout TEXT back in capitals.",
  parameters: {
    type: "object",
    required: ["text"],
    properties: {
      text: { type: "string", description: "what to shout." },
      times: { type: "integer", description: "how many times to say it.", default: 1 },
    },
  },
};
const USAGE = "usage: {{program}} [--schema] < ARGUMENTS.json";

function fail(message, status = 1) {
  process.stderr.write(`{{name}}: ${message}\n`);
  process.exit(status);
}

function handle(args) {
  if (!args.text.trim()) {
    return { error: "text is empty: give some words to shout", error_code: "EMPTY_TEXT" };
  }
  return { output: Array(args.times ?? 1).fill(args.text.toUpperCase()).join(" ") };
}

function check(args) {
  if (typeof args !== "object" || args === null || Array.isArray(args)) {
    fail("expected a JSON object on stdin");
  }
  if (args.text == null) fail("missing required field 'text'");
  if (typeof args.text !== "string") fail("field 'text' must be a string");
  if (args.times != null && !Number.isInteger(args.times)) fail("field 'times' must be an integer");
  return args;
}

const argv = process.argv.slice(2);
if (argv[0] === "--schema") {
  process.stdout.write(JSON.stringify(SCHEMA, null, 2) + "\n");
} else if (argv[0] === "--help" || argv[0] === "-h") {
  process.stdout.write(USAGE + "\n");
} else if (argv.length) {
  fail(`unexpected argument '${argv[0]}'; ${USAGE}`, 2);
} else {
  const chunks = [];
  process.stdin.on("data", (chunk) => chunks.push(chunk));
  process.stdin.on("end", () => {
    const text = Buffer.concat(chunks).toString("utf8");
    if (!text.trim()) fail("expected a JSON object on stdin, got nothing");
    let args;
    try {
      args = JSON.parse(text);
    } catch (error) {
      fail(`invalid JSON on stdin: ${error.message}`);
    }
    process.stdout.write(JSON.stringify(handle(check(args))));
  });
}
