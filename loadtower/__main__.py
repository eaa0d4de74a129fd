from loadtower.cli import main

raise SystemExit(main())
