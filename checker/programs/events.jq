# events.jq: the FailedScheduling events that explain the unscheduled pods.
#
# Input:     `kubectl get events --all-namespaces --field-selector reason=FailedScheduling -o json`,
#            or `kubectl get events.events.k8s.io -A -o json`; the two shapes may be mixed in one list.
# Variables: $report  the report of report.jq, slurped (`--slurpfile report FILE`),
#                     so the report itself is $report[0].
# Output:    an array of at most 50 events, newest first. An event matches when
#            the pod it is about (core/v1 `involvedObject`, events.k8s.io `regarding`)
#            is one of the unscheduled pods: same namespace and name, and same uid
#            when both sides carry one. Events of pods that have since been bound,
#            and kube-system noise, never match.
#
# Count and last seen follow kubectl (printEvent in pkg/printers/internalversion/
# printers.go, eventTime() in kubectl/pkg/cmd/events/events.go). A new-style event
# keeps its first occurrence in eventTime; once it repeats, `series` holds the
# count and the last time:
#   last seen  series.lastObservedTime when series is set, else lastTimestamp,
#              else the first-seen time (firstTimestamp, else eventTime)
#   count      series.count when series is set, else count when above 0, else 1
# (events.k8s.io calls the old fields deprecatedCount, deprecatedFirstTimestamp,
# deprecatedLastTimestamp). Order: newest first by last seen, compared as instants.

# lib.jq (canon) comes first: the drivers put it in front of this file.

def pod_key: "\(.namespace | canon)/\(.name | canon)";

# A time field that is set: Go's zero time is written as null (or left out).
def stamp: if type == "string" and . != "" then . else null end;
# A count as kubectl has it: an int32 above 0 (canon: printed alike everywhere).
def positive: if type == "number" and . > 0 and . < 2147483648 and . == floor then canon else null end;

def series_set: .series | objects;
def first_seen: (.firstTimestamp | stamp) // (.deprecatedFirstTimestamp | stamp) // (.eventTime | stamp);
def last_seen:
  (series_set | .lastObservedTime | stamp)
  // (.lastTimestamp | stamp) // (.deprecatedLastTimestamp | stamp)
  // first_seen // "";
def occurrences:
  (series_set | .count | positive) // (.count | positive) // (.deprecatedCount | positive) // 1;

# Digits as a number (no tonumber: jaq and jq parse differently); null unless
# the string is all ASCII digits.
def digits_value:
  explode
  | if length > 0 and all(.[]; . >= 48 and . <= 57)
    then reduce .[] as $c (0; . * 10 + $c - 48)
    else null end;

def leap: (. % 4 == 0 and . % 100 != 0) or . % 400 == 0;
def days_in($year; $month):
  if $month == 2 then (if $year | leap then 29 else 28 end)
  elif $month == 4 or $month == 6 or $month == 9 or $month == 11 then 30
  else 31 end;

# [year, month, day] one day later or earlier.
def next_day:
  if .[2] < days_in(.[0]; .[1]) then [.[0], .[1], .[2] + 1]
  elif .[1] < 12 then [.[0], .[1] + 1, 1]
  else [.[0] + 1, 1, 1] end;
def previous_day:
  if .[2] > 1 then [.[0], .[1], .[2] - 1]
  elif .[1] > 1 then [.[0], .[1] - 1, days_in(.[0]; .[1] - 1)]
  else [.[0] - 1, 12, 31] end;

# An RFC 3339 time as a key that orders instants: [year, month, day, second of
# the day, nanoseconds as 9 digits], in UTC. Fractions of any length compare
# by value (`:42.5Z` is after `:42.499999Z` and `:42Z`), offsets are applied.
# Anything else is [] and sorts before every time. (fromdate is not portable:
# jq 1.6 refuses fractions and offsets that jaq accepts.)
def instant:
  if type != "string" or length < 20
     or .[4:5] != "-" or .[7:8] != "-" or .[10:11] != "T" or .[13:14] != ":" or .[16:17] != ":"
  then []
  else
    [(.[0:4], .[5:7], .[8:10], .[11:13], .[14:16], .[17:19]) | digits_value] as $f
    | .[19:] as $rest
    | (if ($rest | .[0:1]) == "." then
         ($rest | .[1:] | explode | map(. >= 48 and . <= 57) | (indices(false) | .[0]) // length) as $n
         | [($rest | .[1:1 + $n]), ($rest | .[1 + $n:])]
       else ["", $rest] end) as [$fraction, $zone]
    | (if $zone == "Z" then 0
       elif ($zone | length) == 6 and ($zone | .[3:4]) == ":"
            and (($zone | .[0:1]) == "+" or ($zone | .[0:1]) == "-") then
         [($zone | .[1:3], .[4:6]) | digits_value] as [$h, $m]
         | if $h == null or $m == null or $h > 23 or $m > 59 then null
           elif ($zone | .[0:1]) == "+" then 0 - ($h * 60 + $m) * 60
           else ($h * 60 + $m) * 60 end
       else null end) as $shift
    | if any($f[]; . == null) or $shift == null or ($rest | .[0:1]) == "." and $fraction == ""
         or $f[0] < 1 or $f[1] < 1 or $f[1] > 12 or $f[2] < 1 or $f[2] > days_in($f[0]; $f[1])
         or $f[3] > 23 or $f[4] > 59 or $f[5] > 59
      then []
      else
        ($f[3] * 3600 + $f[4] * 60 + $f[5] + $shift) as $second
        | (if $second < 0 then [$f[0:3] | previous_day, $second + 86400]
           elif $second >= 86400 then [$f[0:3] | next_day, $second - 86400]
           else [$f[0:3], $second] end) as [$date, $utc_second]
        | $date + [$utc_second, ($fraction + "000000000" | .[0:9])]
      end
  end;

($report[0].unscheduled_pods | map({key: pod_key, value: (.uid // "")}) | from_entries) as $uid_by_pod
| if type != "object" or (.items | type) != "array" then error("events document has no items array") else . end
| [ .items[]
    | select(.reason == "FailedScheduling")
    | (.involvedObject // .regarding // {}) as $pod
    | select(($pod.kind // "Pod") == "Pod")
    | ($pod | pod_key) as $key
    | select($uid_by_pod | has($key))
    | select($uid_by_pod[$key] == "" or ($pod.uid // "") == "" or $pod.uid == $uid_by_pod[$key])
    | {
        namespace: ($pod.namespace | canon),
        pod: ($pod.name | canon),
        last_seen: last_seen,
        count: occurrences,
        message: (.message // .note // "" | canon)
      } ]
| sort_by([(.last_seen | instant), .namespace, .pod, .message])
| reverse
| .[:50]
