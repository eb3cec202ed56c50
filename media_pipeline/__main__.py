import sys

from media_pipeline.cli import main

sys.exit(main())
