import os
import sys

# The example's modules (compactor.py) import from here, whatever the rootdir.
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
