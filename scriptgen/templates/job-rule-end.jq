# job-rule-end.jq: the end of upstream's Job rule (job-rule.jq), after
# report.jq, for a host's verify_pods() rendered without the feature
# exact-owner-kinds.
#
# Upstream's function counts the pods its Job rule excuses among the pods
# that "scheduled successfully" ("all N pods") and never names them: so
# the report says that no pod was excused, and the lines are upstream's.
#
# Input:  report.jq's output. Output: the same, excusing no pod.

| if type == "object" and has("excused") then
    . + {excused: 0, excused_pods: [], excused_kinds: []}
  else
    .
  end
