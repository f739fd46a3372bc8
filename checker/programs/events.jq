# events.jq: the FailedScheduling events that explain the unscheduled pods.
#
# Input:     the events list as `jq -s` reads it, an array of its documents (lib.jq's
#            list_items): the raw pages of `/api/v1/events?fieldSelector=reason%3DFailedScheduling`,
#            or one `kubectl get events -A -o json` List (also events.events.k8s.io; the two
#            shapes may be mixed in one list).
# Variables: $report  the report of report.jq, slurped (`--slurpfile report FILE`),
#                     so the report itself is $report[0].
# Output:    {matched: how many events matched, events: every one of them,
#            newest first} (the outputs pick each group's newest:
#            lib.jq's group_events). An event matches when
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
def stamp: if is_string and . != "" then . else null end;
# A count as kubectl has it: an int32 above 0 (canon: printed alike everywhere).
def positive: if is_number and . > 0 and . < 2147483648 and . == floor then canon else null end;

def series_set: .series | objects;
def first_seen:
  (.firstTimestamp | stamp) // (.deprecatedFirstTimestamp | stamp) // (.eventTime | stamp);
def last_seen:
  (series_set | .lastObservedTime | stamp)
  // (.lastTimestamp | stamp) // (.deprecatedLastTimestamp | stamp)
  // first_seen // "";
def occurrences:
  (series_set | .count | positive) // (.count | positive) // (.deprecatedCount | positive) // 1;

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

# An integer as at least $n digits (tostring prints integers alike everywhere).
def pad($n): tostring as $s | ("0000" | .[0:$n - ($s | length)]) + $s;

# The largest $i in [0, $below) with $i * $unit <= . (no division: jq and
# jaq divide differently).
def units($unit; $below):
  . as $x | reduce range(0; $below) as $i (0; if $i * $unit <= $x then $i else . end);

# An RFC 3339 time as a key that orders instants: ["YYYY-MM-DDTHH:MM:SS" in
# UTC, nanoseconds as 9 digits]. Fractions of any length compare by value
# (`:42.5Z` is after `:42.499999Z` and `:42Z`); an offset is applied, with
# the day rolling over. Anything else is [] and sorts before every time.
# (fromdate is not portable: jq 1.6 refuses fractions and offsets that jaq
# accepts.) jaq runs every jq operation at a cost, so the checks are few and
# native: the 14 digits in one sort, the separators in one comparison, and a
# UTC time (what the API server writes) compares its fields as text: only a
# day after the 28th takes arithmetic, and an offset. The API server's own
# form (`...:SSZ`) skips the search for a fraction and a zone.
def instant:
  if (is_string | not) or length < 20 then [] else
    . as $text
    | explode as $c
    | def digit($i): $c[$i] >= 48 and $c[$i] <= 57;
      def two($i): ($c[$i] - 48) * 10 + $c[$i + 1] - 48;
      # Two digits compare as text as they do as numbers.
      def out_of_range:
        $text[0:4] == "0000" or $text[5:7] < "01" or $text[5:7] > "12"
        or $text[8:10] < "01"
        or ($text[8:10] > "28" and two(8) > days_in(two(0) * 100 + two(2); two(5)))
        or $text[11:13] > "23" or $text[14:16] > "59" or $text[17:19] > "59";
    # The separators in place, and the 14 other code points of the first 19
    # digits: none of them a separator (`-`, `:`, `T` left out, 14 remain),
    # the least and the greatest of them digits.
    if $text[4:5] + $text[7:8] + $text[10:11] + $text[13:14] + $text[16:17] != "--T::"
       or ($c[0:19] - [45, 58, 84] | length != 14 or (sort | .[0] < 48 or .[-1] > 57))
    then []
    # What the API server writes, "...:SSZ": UTC, no fraction.
    elif length == 20 and $c[19] == 90 then
      if out_of_range then [] else [$text[0:19], "000000000"] end
    else
      (if $c[19] == 46
         then ($c[20:] | map(. >= 48 and . <= 57) | (indices(false) | .[0]) // length)
         else -1 end) as $digits
      | (if $digits < 0 then 19 else 20 + $digits end) as $zone_at
      | ($text | .[$zone_at:]) as $zone
      | (if $digits > 0 then $text[20:20 + $digits] + "000000000" | .[0:9]
         else "000000000" end) as $fraction
      | (if $zone == "Z" then 0
         elif ($zone | length) == 6 and ($c[$zone_at] == 43 or $c[$zone_at] == 45)
              and digit($zone_at + 1) and digit($zone_at + 2) and $c[$zone_at + 3] == 58
              and digit($zone_at + 4) and digit($zone_at + 5)
              and two($zone_at + 1) <= 23 and two($zone_at + 4) <= 59 then
           (two($zone_at + 1) * 60 + two($zone_at + 4)) * 60
           | if $c[$zone_at] == 43 then 0 - . else . end
         else null end) as $shift
      | if $shift == null or $digits == 0 or out_of_range then []
        elif $shift == 0 then [$text[0:19], $fraction]
        else
          [two(0) * 100 + two(2), two(5), two(8), two(11), two(14), two(17)] as $f
          | ($f[3] * 3600 + $f[4] * 60 + $f[5] + $shift) as $second
          | (if $second < 0 then [$f[0:3] | previous_day, $second + 86400]
             elif $second >= 86400 then [$f[0:3] | next_day, $second - 86400]
             else [$f[0:3], $second] end) as [$date, $utc]
          | ($utc | units(3600; 24)) as $h
          | ($utc - $h * 3600 | units(60; 60)) as $m
          | ($utc - $h * 3600 - $m * 60) as $seconds
          | ["\($date[0] | pad(4))-\($date[1] | pad(2))-\($date[2] | pad(2))"
             + "T\($h | pad(2)):\($m | pad(2)):\($seconds | pad(2))",
             $fraction]
        end
    end
  end;

($report[0].unscheduled_pods
 | map({key: pod_key, value: (.uid // "")})
 | from_entries) as $uid_by_pod
| [ list_items("events document"; "Event"; "kubectl get events -A -o json")[]
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
| {matched: length, events: reverse}
