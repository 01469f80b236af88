/* The Monte Carlo bot's playouts in C: games.classic.sim.playouts.playouts, game by game.
 *
 * The same games, the same policy and the same arithmetic as the numpy batch in playouts.py
 * (which stays the reference and the fallback where this module is not built): for the same
 * inputs both give the same bull heads and the same cards, checked by tests/test_bots_classic.py
 * on random positions. The floating-point expressions are written in numpy's order and the
 * module is compiled with -ffp-contract=off, so that no multiply-add is fused and the greedy
 * policy's scores and the other seats' row choices round as numpy rounds them.
 *
 * One call: playouts(lasts, counts, heads, hands, first, plays, salt, bulls, odds, taken, chosen,
 *                    k, r, h, s, t, o, capacity, top, cheapest)
 * Every array is a C-contiguous buffer of int64 (salt, odds: float64), shaped as playouts.py
 * documents; taken [k * s] and chosen [k * s * t] are written. Sizes and cards are checked
 * before any game is played: a bad call raises ValueError and writes nothing.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#define TAKE 1000
#define NONE ((int64_t)1 << 20)
#define GOLDEN 0.6180339887498949
#define MAX_ROWS 64
#define MAX_HAND 256
#define MAX_OTHERS 256

typedef struct {
    const int64_t *lasts, *counts, *heads, *hands, *first, *plays, *bulls;
    const double *salt, *odds;
    int64_t *taken, *chosen;
    Py_ssize_t k, r, h, s, t, o, nbulls;
    long long capacity, top;
    double cheapest;
} Args;

/* Insertion sort, ascending: hands and turns are a few cards, and nearly sorted already. */
static void sort(int64_t *v, Py_ssize_t n) {
    for (Py_ssize_t i = 1; i < n; i++) {
        int64_t x = v[i];
        Py_ssize_t j = i;
        for (; j > 0 && v[j - 1] > x; j--) v[j] = v[j - 1];
        v[j] = x;
    }
}

/* The row whose last card is the highest below `card` (its last card in *end), as numpy's
 * argmax over the rows' last cards below it; row 0 and *end = -1 when every row's is above. */
static inline Py_ssize_t row_below(const int64_t *lasts, Py_ssize_t r, int64_t card, int64_t *end) {
    Py_ssize_t row = 0;
    *end = -1;
    for (Py_ssize_t j = 0; j < r; j++) {
        int64_t under = lasts[j] < card ? lasts[j] : -1;
        if (under > *end) {
            *end = under;
            row = j;
        }
    }
    return row;
}

/* The greedy policy's card in one game (playouts.py's _greedy): an index into hand. */
static Py_ssize_t greedy(const Args *a, const int64_t *hand, Py_ssize_t size, const int64_t *lasts,
                         const int64_t *counts, const int64_t *heads) {
    Py_ssize_t r = a->r, best = 0, prev_row = -1;
    int prev_low = 0;
    double best_score = INFINITY;
    int64_t fewest = heads[0];
    for (Py_ssize_t j = 1; j < r; j++)
        if (heads[j] < fewest) fewest = heads[j];
    for (Py_ssize_t i = 0; i < size; i++) {
        int64_t card = hand[i];
        if (card >= NONE) break; /* the rest of the hand is empty slots */
        int64_t end;
        Py_ssize_t row = row_below(lasts, r, card, &end);
        int low = end < 0;
        int first = i == 0 || row != prev_row || prev_low;
        double score = INFINITY;
        if (i == 0 && low) {
            score = (double)(fewest * TAKE + TAKE - 1);
        } else if (!low && first) {
            int64_t gap = card - end;
            if (gap > a->top) gap = a->top;
            int64_t need = a->capacity - counts[row];
            double odds = a->odds[need * (a->top + 1) + gap];
            score = (double)((heads[row] + need) * TAKE) * odds + (double)gap;
        }
        if (score < best_score) {
            best_score = score;
            best = i;
        }
        prev_row = row;
        prev_low = low;
    }
    return best;
}

/* The row a low card takes (playouts.py's _low_row). */
static Py_ssize_t low_row(const Args *a, int64_t card, int mine, double salt, const int64_t *heads) {
    Py_ssize_t row = 0;
    for (Py_ssize_t j = 1; j < a->r; j++)
        if (heads[j] < heads[row]) row = j;
    if (a->cheapest < 1.0 && !mine) {
        double x = (double)card * GOLDEN;
        double u = fmod(x + salt, 1.0);
        if (u >= a->cheapest) {
            double scaled = (u - a->cheapest) / (1.0 - a->cheapest);
            scaled = scaled * (double)a->r;
            int64_t any = (int64_t)scaled;
            row = any < a->r - 1 ? (Py_ssize_t)any : a->r - 1;
        }
    }
    return row;
}

static void play(const Args *a) {
    Py_ssize_t r = a->r, h = a->h, s = a->s, t = a->t, o = a->o;
    int64_t lasts[MAX_ROWS], counts[MAX_ROWS], heads[MAX_ROWS], hand[MAX_HAND], cards[MAX_OTHERS + 1];
    int given = a->k > 0 && a->first[0] != 0;
    for (Py_ssize_t k = 0; k < a->k; k++) {
        for (Py_ssize_t g = 0; g < s; g++) {
            memcpy(lasts, a->lasts + k * r, r * sizeof(int64_t));
            memcpy(counts, a->counts + k * r, r * sizeof(int64_t));
            memcpy(heads, a->heads + k * r, r * sizeof(int64_t));
            memcpy(hand, a->hands + k * h, h * sizeof(int64_t));
            double salt = a->salt[g];
            int64_t taken = 0, mine = a->first[k];
            int64_t *chosen = a->chosen + (k * s + g) * t;
            for (Py_ssize_t turn = 0; turn < t; turn++) {
                if (turn || !given) {
                    Py_ssize_t pick = greedy(a, hand, h, lasts, counts, heads);
                    mine = hand[pick];
                    hand[pick] = NONE;
                    sort(hand, h); /* as numpy's: the card's slot emptied, the hand sorted again */
                }
                chosen[turn] = mine;
                /* The turn's cards ascending. */
                const int64_t *theirs = a->plays + (g * t + turn) * o;
                Py_ssize_t n = o + 1;
                cards[0] = mine;
                memcpy(cards + 1, theirs, o * sizeof(int64_t));
                sort(cards, n);
                for (Py_ssize_t i = 0; i < n; i++) {
                    int64_t c = cards[i];
                    int is_mine = c == mine;
                    int64_t end;
                    Py_ssize_t row = row_below(lasts, r, c, &end);
                    int full;
                    if (end < 0) { /* rule 4: only the turn's lowest card can be below every row */
                        row = low_row(a, c, is_mine, salt, heads);
                        full = 1;
                    } else {
                        full = counts[row] >= a->capacity;
                    }
                    if (full && is_mine) taken += heads[row];
                    lasts[row] = c;
                    counts[row] = full ? 1 : counts[row] + 1;
                    heads[row] = (full ? 0 : heads[row]) + a->bulls[c];
                }
            }
            a->taken[k * s + g] = taken;
        }
    }
}

/* A buffer of exactly `count` items of `itemsize` bytes, or ValueError naming it. */
static int sized(Py_buffer *view, Py_ssize_t count, Py_ssize_t itemsize, const char *name) {
    if (view->len != count * itemsize) {
        PyErr_Format(PyExc_ValueError, "playouts: %s holds %zd bytes, not %zd", name, view->len,
                     count * itemsize);
        return 0;
    }
    return 1;
}

static int cards_ok(const int64_t *cards, Py_ssize_t count, Py_ssize_t nbulls, int allow_none,
                    const char *name) {
    for (Py_ssize_t i = 0; i < count; i++) {
        int64_t c = cards[i];
        if (allow_none && c == NONE) continue;
        if (c < 0 || c >= nbulls) {
            PyErr_Format(PyExc_ValueError, "playouts: %s holds %lld, not a card of this deck", name,
                         (long long)c);
            return 0;
        }
    }
    return 1;
}

static PyObject *py_playouts(PyObject *self, PyObject *args) {
    (void)self;
    Py_buffer b[11];
    Args a;
    memset(b, 0, sizeof b);
    if (!PyArg_ParseTuple(args, "y*y*y*y*y*y*y*y*y*w*w*nnnnnnLLd", &b[0], &b[1], &b[2], &b[3], &b[4],
                          &b[5], &b[6], &b[7], &b[8], &b[9], &b[10], &a.k, &a.r, &a.h, &a.s, &a.t,
                          &a.o, &a.capacity, &a.top, &a.cheapest))
        return NULL;
    PyObject *result = NULL;
    const char *names[] = {"lasts", "counts", "heads", "hands", "first", "plays",
                           "salt", "bulls", "odds", "taken", "chosen"};
    if (a.k < 1 || a.r < 1 || a.r > MAX_ROWS || a.h < 1 || a.h > MAX_HAND || a.s < 1 || a.t < 0 ||
        a.t > a.h + 1 || a.o < 0 || a.o > MAX_OTHERS || a.capacity < 1 || a.top < 1) {
        PyErr_SetString(PyExc_ValueError, "playouts: sizes out of range");
        goto done;
    }
    a.nbulls = b[7].len / (Py_ssize_t)sizeof(int64_t);
    Py_ssize_t counts[] = {a.k * a.r, a.k * a.r, a.k * a.r, a.k * a.h, a.k, a.s * a.t * a.o,
                           a.s, a.nbulls, (a.capacity + 1) * (a.top + 1), a.k * a.s, a.k * a.s * a.t};
    for (int i = 0; i < 11; i++)
        if (!sized(&b[i], counts[i], i == 6 || i == 8 ? sizeof(double) : sizeof(int64_t), names[i]))
            goto done;
    a.lasts = b[0].buf, a.counts = b[1].buf, a.heads = b[2].buf, a.hands = b[3].buf;
    a.first = b[4].buf, a.plays = b[5].buf, a.salt = b[6].buf, a.bulls = b[7].buf;
    a.odds = b[8].buf, a.taken = b[9].buf, a.chosen = b[10].buf;
    int given = a.first[0] != 0;
    for (Py_ssize_t k = 0; k < a.k; k++) {
        if ((a.first[k] != 0) != given) {
            PyErr_SetString(PyExc_ValueError,
                            "playouts: the first cards are all given or all 0 (the greedy policy's)");
            goto done;
        }
        const int64_t *hand = a.hands + k * a.h;
        Py_ssize_t held = 0;
        for (Py_ssize_t i = 0; i < a.h; i++) {
            held += hand[i] != NONE;
            if (i && hand[i] <= hand[i - 1] && hand[i] != NONE) {
                PyErr_SetString(PyExc_ValueError, "playouts: a hand is not ascending (NONE last)");
                goto done;
            }
        }
        if (held < a.t - (given ? 1 : 0)) {
            PyErr_SetString(PyExc_ValueError, "playouts: a hand holds fewer cards than the turns");
            goto done;
        }
    }
    for (Py_ssize_t i = 0; i < a.k * a.r; i++) {
        if (a.counts[i] < 0 || a.counts[i] > a.capacity) {
            PyErr_SetString(PyExc_ValueError, "playouts: a row holds more cards than its capacity");
            goto done;
        }
    }
    if (!cards_ok(a.lasts, a.k * a.r, a.nbulls, 0, "lasts") ||
        !cards_ok(a.hands, a.k * a.h, a.nbulls, 1, "hands") ||
        !cards_ok(a.first, a.k, a.nbulls, 0, "first") ||
        !cards_ok(a.plays, a.s * a.t * a.o, a.nbulls, 0, "plays"))
        goto done;
    Py_BEGIN_ALLOW_THREADS
    play(&a);
    Py_END_ALLOW_THREADS
    result = Py_None;
    Py_INCREF(result);
done:
    for (int i = 0; i < 11; i++)
        if (b[i].obj) PyBuffer_Release(&b[i]);
    return result;
}

static PyMethodDef methods[] = {
    {"playouts", py_playouts, METH_VARARGS,
     "The Monte Carlo bot's playouts, game by game (see games.classic.sim.playouts)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "games.classic.sim._native",
                                    "The Monte Carlo bot's playouts in C.", -1, methods,
                                    NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__native(void) { return PyModule_Create(&module); }
