#!/bin/sh
input=$(cat)
text=$(printf '%s' "$input" | sed -n 's/.*"text":"\([^"]*\)".*/\1/p')
printf '%s' "$text" | wc -w | tr -d ' '
