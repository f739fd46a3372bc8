# lib.jq: definitions shared by the programs that print words (render.jq,
# summary.jq, github.jq). The checker and scriptgen put this text in front of
# each of them (see checker/src/programs.rs), so a message or an escaping rule
# is written once here and reaches text, Markdown and annotations alike.

# Any value as text: strings as they are, anything else as JSON.
def text: if type == "string" then . else tojson end;

# Code points that must not reach a CI log as they are: C0 controls and DEL
# (newline, tab, ESC sequences), C1 controls, the line and paragraph
# separators, and the invisible direction marks and overrides that make a log
# line read differently from its bytes.
def hidden_control:
  . < 32 or . == 127 or (. >= 128 and . < 160)
  or . == 1564 or . == 8206 or . == 8207 or . == 8232 or . == 8233
  or (. >= 8234 and . <= 8238) or (. >= 8294 and . <= 8297);

# One record, one log line: every hidden control becomes a space.
def one_line: text | [explode[] | if hidden_control then 32 else . end] | implode;

# The sentences the three outputs share.
def verdict_message:
  if .verdict == "pass" then "All \(.total) pods are scheduled"
  elif .verdict == "empty" then "No pods found outside the excluded namespaces"
  else "Pod validation failed: \(.unscheduled) unscheduled, \(.failed) failed"
  end;
def unscheduled_heading: "Unscheduled pods (\(.unscheduled))";
def failed_heading: "Failed pods (\(.failed))";
def events_heading: "FailedScheduling events for the unscheduled pods (\(.events | length), newest first)";
def events_missing_note:
  if .events == null then "FailedScheduling events: not collected"
  else "FailedScheduling events: none for the unscheduled pods"
  end;

