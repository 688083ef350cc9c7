import sys

from slidegen.cli.main import main

sys.exit(main())
