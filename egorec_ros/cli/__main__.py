"""`python -m egorec_ros.cli` = `egorec`."""
from egorec_ros.cli import main

raise SystemExit(main())
