#!/bin/sh
# Reads the call's arguments as one JSON object on stdin, prints the result on stdout.
input=$(cat)
name=$(printf '%s' "$input" | sed -n 's/.*"name":"\([^"]*\)".*/\1/p')
if [ -z "$name" ]; then
  echo "missing name" >&2
  exit 2
fi
# The injected key arrives as the environment variable named like the inject key, and in
# config.json; a tool uses it, it never prints it.
if [ -n "$(printenv llm.api_key)" ]; then key="with an API key"; else key="without an API key"; fi
echo "Hello, $name! (greeter ran $key)"
