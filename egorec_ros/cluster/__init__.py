"""Running per-bag / per-episode work on a Ray cluster (``--ray ADDRESS``), for convert and export.

Only the dispatch: joining the cluster, checking that every node sees the paths the work
needs, labelling where a task ran, and an executor with the ``concurrent.futures`` interface.
Ray is an optional dependency (``pip install 'egorec_ros[ray]'``), imported only here, and
only when ``--ray`` is given. Work results stay on shared storage: tasks return small
summaries, never frames.
"""
