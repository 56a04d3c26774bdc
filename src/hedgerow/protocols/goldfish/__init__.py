"""Goldfish: peer selection by KNN matrix completion (Xue, Mao, Bojja Venkatakrishnan, Kannan,
IEEE ICBC 2023).

The package follows the paper's four components (Fig. 1):

* :mod:`~hedgerow.protocols.goldfish.observe` -- the node-local observations (§III);
* :mod:`~hedgerow.protocols.goldfish.matrix` -- the matrix constructor and cell classes
  (§IV-A, §IV-B1, §IV-B5, Table I);
* :mod:`~hedgerow.protocols.goldfish.knn` -- row distances and K nearest rows (§IV-B2);
* :mod:`~hedgerow.protocols.goldfish.complete` -- the objective of eq. 1-2 and its solvers
  (§IV-B3, §IV-B4);
* :mod:`~hedgerow.protocols.goldfish.select` -- altruistic exploitation and the depleting
  pool (§IV);
* :mod:`~hedgerow.protocols.goldfish.protocol` -- the adaptive protocol and its scheduler
  (§IV-A2, §V-A).

Examples
--------
>>> Goldfish().get_params()["window"]
3
"""

from hedgerow.protocols.goldfish.protocol import Goldfish, capped_random_out, in_degrees

__all__ = ["Goldfish", "capped_random_out", "in_degrees"]
