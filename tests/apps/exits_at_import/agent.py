"""An agent module that ends the interpreter while being imported; how is chosen by a variable."""

import os
import sys

how = os.environ.get("EXIT_HOW", "sys.exit")
if how == "sys.exit":
    sys.exit(0)
elif how == "os._exit":
    os._exit(0)
elif how == "missing":
    import a_dependency_nobody_installed  # noqa: F401
