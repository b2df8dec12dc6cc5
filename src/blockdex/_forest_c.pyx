# cython: language_level=3
"""What ``blockdex/forest.py`` runs in C: the only implementation of these rules (built by
``pip install``).

* :func:`forest_raw` — the trees' evaluation (``forest.Forest.raw``).
"""

cimport cython

cdef extern from *:
    """
    typedef struct { float threshold; unsigned short feature; unsigned short right; } bd_tree_node;

    /* Sixteen rows at a time: their walks are independent, so the CPU overlaps the loads that
       one walk alone would wait for in turn (~2x faster than row by row; 16 measured 13% faster
       than 8, 32 no faster than 16). Trees are in preorder: the left child (x <= threshold) is
       the next node, the right one ``right`` nodes on; a leaf has right = 0 and a NaN
       threshold, so it keeps the walk. 8-byte nodes and float32 leaf values: a third of the
       memory of 16-byte nodes with float64 values, which other work between pages evicts. */
    /* Add tree ``root``'s leaf value for rows i .. i + k - 1 to ``out``. */
    static inline void bd_forest_group(const float *X, Py_ssize_t i, int k, Py_ssize_t stride,
                                       const bd_tree_node *nodes, const float *value, int root,
                                       int depth, double *out) {
        int node[16];
        const float *row[16];
        for (int j = 0; j < k; j++) { node[j] = root; row[j] = X + (i + j) * stride; }
        for (int level = 0; level < depth; level++)
            for (int j = 0; j < k; j++) {
                const bd_tree_node *p = nodes + node[j];
                /* branch-free (a mispredicted branch per node would cost more than the walk):
                   all ones when the row goes left */
                int left = -(int) (row[j][p->feature] <= p->threshold);
                node[j] += (left & 1) | (~left & (int) p->right);
            }
        for (int j = 0; j < k; j++) out[i + j] += (double) value[node[j]];
    }

    static void bd_forest_raw(const float *X, Py_ssize_t n, Py_ssize_t stride,
                              const bd_tree_node *nodes, const float *value, const int *roots,
                              Py_ssize_t n_trees, int depth, double *out) {
        for (Py_ssize_t t = 0; t < n_trees; t++) {
            Py_ssize_t i = 0;
            if (t + 1 < n_trees) {
                /* the next tree's nodes, which other work between pages has likely pushed out
                   of the caches: fetched while this tree is walked, not level by level */
                const char *a = (const char *) (nodes + roots[t + 1]);
                const char *b = t + 2 < n_trees ? (const char *) (nodes + roots[t + 2]) : a + 64;
                for (; a < b; a += 64) __builtin_prefetch(a);
                a = (const char *) (value + roots[t + 1]);  /* and its leaf values */
                b = t + 2 < n_trees ? (const char *) (value + roots[t + 2]) : a + 64;
                for (; a < b; a += 64) __builtin_prefetch(a);
            }
            for (; i + 16 <= n; i += 16)  /* k a constant 16 here: the compiler unrolls */
                bd_forest_group(X, i, 16, stride, nodes, value, roots[t], depth, out);
            if (i < n)  /* the last rows, fewer than 16: walked together too */
                bd_forest_group(X, i, (int) (n - i), stride, nodes, value, roots[t], depth, out);
        }
    }
    """
    void bd_forest_raw(const float *X, Py_ssize_t n, Py_ssize_t stride, const void *nodes,
                       const float *value, const int *roots, Py_ssize_t n_trees, int depth,
                       double *out) nogil

FOREST_NODE_BYTES = 8  # float threshold, uint16 feature, uint16 offset to the right child


@cython.boundscheck(False)
@cython.wraparound(False)
def forest_raw(
    const float[:, ::1] X,
    const unsigned char[::1] nodes,
    const float[::1] value,
    const int[::1] roots,
    int depth,
    double[::1] out,
):
    """Add each tree's leaf value for each row of ``X`` to ``out`` (trees in order).

    ``nodes`` holds 8 bytes a node, trees in preorder (see ``blockdex.forest.Forest``):
    the float32 threshold, the feature (uint16) and the offset to the right child (uint16; 0 in
    a leaf, whose threshold is NaN). ``value`` holds each node's float32 leaf value. Every tree
    is walked exactly ``depth`` steps. The caller checks that features, offsets and roots are in
    range (``Forest._pack`` builds them from a checked model; ``Forest.raw`` checks the rows).
    """
    cdef Py_ssize_t n = X.shape[0], n_nodes = value.shape[0]
    if out.shape[0] != n or n_nodes * FOREST_NODE_BYTES != nodes.shape[0]:
        raise ValueError("arrays of the wrong length")
    if n == 0 or roots.shape[0] == 0:
        return
    with nogil:
        bd_forest_raw(&X[0, 0], n, X.shape[1], &nodes[0], &value[0], &roots[0], roots.shape[0],
                      depth, &out[0])
