#!/bin/sh
# Reads the call's arguments as one JSON object on stdin, prints the result on stdout.
input=$(cat)
name=$(printf '%s' "$input" | sed -n 's/.*"name":"\([^"]*\)".*/\1/p')
if [ -z "$name" ]; then
  echo "missing name" >&2
  exit 2
fi
# The injected key is in config.json (and in the variable `llm.api_key`, which programs other
# than sh can read); a tool uses it, it never prints it.
if grep -q '"api_key": "[^"]' config.json; then key="with an API key"; else key="without an API key"; fi
echo "Hello, $name! (greeter ran $key)"
