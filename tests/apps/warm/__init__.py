"""An agent for the warm start (run/workers/zygote.py): its import reads ``prompt.txt`` beside it
(an input of every question, forked worker or not), and with ``WARM_IMPORT_THREAD=1`` starts a
thread, as a telemetry exporter's import does: then its workers must be spawned, not forked;
with ``WARM_IMPORT_HANG=1`` its import never ends.
"say X" answers "X"; "call kill_self" calls the tool that kills its own process; "call collector"
says how the cyclic collector stood at the import and stands now; "call started" what the process
that imported it started with (its path, folder, environment, signals...); "call draw" draws from
``random``, which ``WARM_SEED=N`` seeds at import."""
