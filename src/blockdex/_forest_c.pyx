# cython: language_level=3
"""What ``blockdex/forest.py`` runs in C: the only implementation of these rules (built by
``pip install``).

* :func:`forest_raw` — the trees' evaluation (``forest.Forest.raw``, ``forest.Forests.raw``).
"""

cimport cython

cdef extern from *:
    """
    typedef struct { float threshold; unsigned short feature; unsigned short pad; } bd_tree_node;

    /* Every tree is a complete binary tree of ``depth`` levels in heap order: node k's children
       are 2k + 1 (x <= threshold) and 2k + 2, so a step is one compare and one add, with no
       child offset to load or select (stage 1 over wcxb pages' blocks took 35% less time than
       with a preorder layout and offsets). A leaf higher up fills every place below its own,
       so the nodes below it may go either way. Sixteen rows at a time (or, for the rows after
       the last such group, sixteen trees at a time): their walks are independent, so the CPU
       overlaps the loads that one walk alone would wait for in turn (~2x faster than row by
       row; 16 measured 13% faster than 8, 32 no faster than 16). 8-byte nodes and float32
       leaf values: the arrays stay small enough to stay in the caches. */
    /* Add the leaf value of the tree at ``nodes`` / ``value`` for rows i .. i + k - 1 to
       ``out`` (k <= 16), walking sixteen rows: where k < 16, the last row fills the rest. */
    static inline void bd_forest_group(const float *X, Py_ssize_t i, int k, Py_ssize_t stride,
                                       const bd_tree_node *nodes, const float *value,
                                       int depth, double *out) {
        int node[16];
        const float *row[16];
        for (int j = 0; j < 16; j++) { node[j] = 0; row[j] = X + (i + (j < k ? j : k - 1)) * stride; }
        for (int level = 0; level < depth; level++)
            for (int j = 0; j < 16; j++) {
                const bd_tree_node *p = nodes + node[j];
                /* branch-free: a mispredicted branch per node would cost more than the walk */
                node[j] = 2 * node[j] + 2 - (int) (row[j][p->feature] <= p->threshold);
            }
        const int first_leaf = (1 << depth) - 1;
        for (int j = 0; j < k; j++) out[i + j] += (double) value[node[j] - first_leaf];
    }

    #define BD_ROW_TAIL 8  /* a group of sixteen rows costs about what eight rows alone cost */
    #ifndef BD_AHEAD
    #define BD_AHEAD 32  /* trees ahead of the group walked whose nodes are fetched */
    #endif

    /* Add all trees' leaf values for one row to ``*out``, sixteen trees at a time: for the
       rows after the last group of sixteen (and a page type's one row), whose walks alone
       would each wait on every load in turn. The values are added in tree order, as the
       groups of rows add them. The nodes and leaf values of the group after the one walked are
       fetched meanwhile (other work between pages has likely pushed them out of the caches),
       up to the ``stored`` trees from ``nodes`` on (the next forest's, when several are stored
       together). */
    static inline void bd_forest_row(const float *row, const bd_tree_node *nodes,
                                     const float *value, Py_ssize_t n_trees, Py_ssize_t stored,
                                     int depth, double *out) {
        const Py_ssize_t inner = ((Py_ssize_t) 1 << depth) - 1, leaves = inner + 1;
        double sum = *out;
        int node[16];
        for (Py_ssize_t t0 = 0; t0 < n_trees; t0 += 16) {
            const int k = n_trees - t0 < 16 ? (int) (n_trees - t0) : 16;
            const bd_tree_node *trees = nodes + t0 * inner;
            const Py_ssize_t f0 = t0 + BD_AHEAD < stored ? t0 + BD_AHEAD : stored;
            const Py_ssize_t f1 = t0 + BD_AHEAD + 16 < stored ? t0 + BD_AHEAD + 16 : stored;
            const char *a = (const char *) (nodes + f0 * inner);
            const char *b = (const char *) (nodes + f1 * inner);
            for (; a < b; a += 64) __builtin_prefetch(a);
            a = (const char *) (value + f0 * leaves);
            b = (const char *) (value + f1 * leaves);
            for (; a < b; a += 64) __builtin_prefetch(a);
            for (int j = 0; j < k; j++) node[j] = 0;
            for (int level = 0; level < depth; level++)
                for (int j = 0; j < k; j++) {
                    const bd_tree_node *p = trees + j * inner + node[j];
                    node[j] = 2 * node[j] + 2 - (int) (row[p->feature] <= p->threshold);
                }
            for (int j = 0; j < k; j++) sum += (double) value[(t0 + j) * leaves + node[j] - inner];
        }
        *out = sum;
    }

    static void bd_forest_raw(const float *X, Py_ssize_t n, Py_ssize_t stride,
                              const bd_tree_node *nodes, const float *value,
                              Py_ssize_t n_trees, Py_ssize_t stored, int depth, double *out) {
        const Py_ssize_t inner = ((Py_ssize_t) 1 << depth) - 1, leaves = inner + 1;
        /* groups of sixteen rows; the rows after them as one more group when they are more
           than BD_ROW_TAIL, else each row on its own, sixteen trees at a time */
        const Py_ssize_t grouped = n % 16 > BD_ROW_TAIL ? n : n - n % 16;
        if (grouped)
            for (Py_ssize_t t = 0; t < n_trees; t++) {
                const bd_tree_node *tree = nodes + t * inner;
                const float *tree_value = value + t * leaves;
                if (t + 1 < n_trees) {
                    /* the next tree's nodes and leaf values, which other work between pages
                       has likely pushed out of the caches: fetched while this tree is walked */
                    const char *a = (const char *) (tree + inner);
                    const char *b = (const char *) (tree + 2 * inner);
                    for (; a < b; a += 64) __builtin_prefetch(a);
                    a = (const char *) (tree_value + leaves);
                    b = (const char *) (tree_value + 2 * leaves);
                    for (; a < b; a += 64) __builtin_prefetch(a);
                }
                for (Py_ssize_t i = 0; i < grouped; i += 16)
                    bd_forest_group(X, i, grouped - i < 16 ? (int) (grouped - i) : 16, stride, tree,
                                    tree_value, depth, out);
            }
        for (Py_ssize_t i = grouped; i < n; i++)
            bd_forest_row(X + i * stride, nodes, value, n_trees, stored, depth, out + i);
    }

    /* Each forest's sums over the rows, forest after forest (stored one after the other): the
       sums of forest f go to out[f * n .. f * n + n - 1]. */
    static void bd_forests_raw(const float *X, Py_ssize_t n, Py_ssize_t stride,
                               const void *node_bytes, const float *value,
                               const Py_ssize_t *trees, Py_ssize_t n_forests, Py_ssize_t stored,
                               int depth, double *out) {
        const bd_tree_node *nodes = (const bd_tree_node *) node_bytes;
        const Py_ssize_t inner = ((Py_ssize_t) 1 << depth) - 1, leaves = inner + 1;
        Py_ssize_t t = 0;
        /* the first trees, which no walk before them fetches ahead */
        const Py_ssize_t first = stored < BD_AHEAD ? stored : BD_AHEAD;
        for (const char *a = (const char *) nodes; a < (const char *) (nodes + first * inner); a += 64)
            __builtin_prefetch(a);
        for (const char *a = (const char *) value; a < (const char *) (value + first * leaves); a += 64)
            __builtin_prefetch(a);
        for (Py_ssize_t f = 0; f < n_forests; f++) {
            bd_forest_raw(X, n, stride, nodes + t * inner, value + t * leaves, trees[f],
                          stored - t, depth, out + f * n);
            t += trees[f];
        }
    }
    """
    void bd_forests_raw(const float *X, Py_ssize_t n, Py_ssize_t stride, const void *nodes,
                        const float *value, const Py_ssize_t *trees, Py_ssize_t n_forests,
                        Py_ssize_t stored, int depth, double *out) nogil

FOREST_NODE_BYTES = 8  # float threshold, uint16 feature, uint16 padding
FOREST_MAX_DEPTH = 12  # 4,095 nodes and 4,096 leaf values a tree


@cython.boundscheck(False)
@cython.wraparound(False)
def forest_raw(
    const float[:, ::1] X,
    const unsigned char[::1] nodes,
    const float[::1] value,
    int depth,
    const Py_ssize_t[::1] trees,
    double[:, ::1] out,
):
    """Add each tree's leaf value for each row of ``X`` to ``out``: the trees of one or more
    forests stored one after the other, ``trees[f]`` of them for forest ``f``, whose sums go to
    row ``f`` of ``out`` (each forest's trees added in their order).

    Each tree is complete, ``depth`` levels in heap order (see ``blockdex.forest.Forest``):
    ``nodes`` holds ``2**depth - 1`` nodes a tree, 8 bytes each (the float32 threshold and the
    uint16 feature, then two bytes of padding), and ``value`` ``2**depth`` float32 leaf values
    a tree. The caller checks that the features are in range (``Forest._pack`` builds the
    arrays from a checked model; ``Forest.raw`` and ``Forests.raw`` check the rows).
    """
    if depth < 0 or depth > FOREST_MAX_DEPTH:
        raise ValueError(f"depth {depth} outside 0..{FOREST_MAX_DEPTH}")
    cdef Py_ssize_t n = X.shape[0], inner = (1 << depth) - 1, leaves = 1 << depth
    cdef Py_ssize_t n_trees = value.shape[0] // leaves, n_forests = trees.shape[0], f, total = 0
    for f in range(n_forests):
        if trees[f] < 0:
            raise ValueError("a negative number of trees")
        total += trees[f]
    if (
        out.shape[0] != n_forests
        or out.shape[1] != n
        or total != n_trees
        or n_trees * leaves != value.shape[0]
        or n_trees * inner * FOREST_NODE_BYTES != nodes.shape[0]
    ):
        raise ValueError("arrays of the wrong length")
    if n == 0 or n_trees == 0:
        return
    with nogil:
        bd_forests_raw(&X[0, 0], n, X.shape[1], &nodes[0] if inner else NULL, &value[0],
                       &trees[0], n_forests, n_trees, depth, &out[0, 0])
