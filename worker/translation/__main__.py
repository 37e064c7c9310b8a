"""The translation worker's process: `python -m worker.translation` (worker.translation.launch)."""

from worker.translation.launch import main

main()
