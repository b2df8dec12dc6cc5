import sys

from blockdex.cli import main

sys.exit(main())
