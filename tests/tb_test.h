/* tb_test.h - the smallest test harness: numbered cases, one line per failure, a summary.
 *
 *   TB_CASE("store-1.2", "newer schema is refused") { ... TB_CHECK(rc == TB_EDB); ... }
 *   return tb_test_done();
 *
 * A case's checks print "FAIL store-1.2 file:line: expr" and the run exits non-zero.
 * Exit code 77 means skipped (CTest's SKIP_RETURN_CODE in tests/CMakeLists.txt).
 */
#ifndef TB_TEST_H
#define TB_TEST_H
#include <stdio.h>
#include <string.h>

static int tb_test_failed_ = 0, tb_test_cases_ = 0, tb_test_case_failed_ = 0;
static const char *tb_test_id_ = "";

static inline void tb_test_begin_(const char *id, const char *what)
{
    tb_test_id_ = id;
    tb_test_cases_++;
    tb_test_case_failed_ = 0;
    printf("case %s: %s\n", id, what);
}
static inline int tb_test_end_(void)
{
    if (tb_test_case_failed_) tb_test_failed_++;
    return 0;
}
/* for-loop trick: the body runs once, then the case is closed */
#define TB_CASE(id, what) \
    for (int tb_once_ = (tb_test_begin_((id), (what)), 1); tb_once_; tb_once_ = tb_test_end_())

#define TB_CHECK(expr) do { if (!(expr)) { \
    printf("FAIL %s %s:%d: %s\n", tb_test_id_, __FILE__, __LINE__, #expr); \
    tb_test_case_failed_ = 1; } } while (0)

#define TB_CHECK_STR_CONTAINS(hay, needle) do { const char *h_ = (hay); \
    if (!h_ || !strstr(h_, (needle))) { \
    printf("FAIL %s %s:%d: '%s' does not contain '%s'\n", tb_test_id_, __FILE__, __LINE__, \
           h_ ? h_ : "(null)", (needle)); tb_test_case_failed_ = 1; } } while (0)

static inline int tb_test_done(void)
{
    printf("%d passed, %d failed\n", tb_test_cases_ - tb_test_failed_, tb_test_failed_);
    return tb_test_failed_ ? 1 : 0;
}
#endif
