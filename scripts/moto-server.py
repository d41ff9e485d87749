"""moto's server, for the CloudWatch tests, with moto's query parser made linear.

moto 5.2's QueryParser asks, for every structure it parses, whether any form key
starts with the structure's prefix, by scanning all the keys: a PutMetricData of
1,000 data (CloudWatch's limit per request) then takes 12 s of one idle core and
over 60 s beside the test run's load, which is the SDK's attempt timeout. This
answers the same question from the sorted keys (bisect): same parse, same result.
Anything else is moto's own. Usage: moto-server.py -H 127.0.0.1 -p PORT
"""

import bisect
import sys

from moto.core import parse
from moto.server import main

if not hasattr(parse.QueryParser, "_gonna_recurse"):
    sys.exit("moto-server.py: this moto has no QueryParser._gonna_recurse; see scripts/test.sh's MOTO_VERSION")


def _gonna_recurse(self, query_params, prefix):
    if prefix == "":
        return False
    # One tuple, read and written whole: a parser may serve two requests' threads.
    cached = getattr(self, "_sorted_keys", None)
    if cached is None or cached[0] is not query_params:
        cached = (query_params, sorted(query_params))
        self._sorted_keys = cached
    keys = cached[1]
    i = bisect.bisect_left(keys, prefix)
    return not (i < len(keys) and keys[i].startswith(prefix))


parse.QueryParser._gonna_recurse = _gonna_recurse

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
