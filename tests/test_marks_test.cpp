#include "engine/test_marks.h"

#include <doctest/doctest.h>

#include <string>

namespace capguard {

TEST_CASE("test marks: spans from begin to end, a test never ended runs to the next") {
  const TestMarks marks = parse_test_marks(
      "capguard-test-begin 100 7 a.py::one\n"
      "capguard-test-end 200 7 a.py::one\n"
      "capguard-test-begin 300 7 a.py::two\n"
      "capguard-test-begin 400 7 a.py::three\r\n"
      "capguard-test-end 500 7 a.py::three\n",
      7);
  CHECK(marks.names == std::vector<std::string>{"a.py::one", "a.py::two", "a.py::three"});
  CHECK_FALSE(marks.test_at(99));
  CHECK(marks.test_at(100) == 0u);
  CHECK(marks.test_at(199) == 0u);
  CHECK_FALSE(marks.test_at(250));
  CHECK(marks.test_at(399) == 1u);
  CHECK(marks.test_at(450) == 2u);
  CHECK_FALSE(marks.test_at(500));
}

TEST_CASE("test marks: node ids keep their spaces; a test run twice is one name") {
  const TestMarks marks = parse_test_marks(
      "capguard-test-begin 1 7 t.py::test[a b]\ncapguard-test-end 2 7 t.py::test[a b]\n"
      "capguard-test-begin 3 7 t.py::test[a b]\n",
      7);
  CHECK(marks.names == std::vector<std::string>{"t.py::test[a b]"});
  CHECK(marks.spans.size() == 2);
  CHECK(marks.test_at(5) == 0u);
}

TEST_CASE("test marks are untrusted: malformed, foreign, late or overlong lines are ignored") {
  const std::string overlong = "capguard-test-begin 50 7 " + std::string(kMaxTestMarkLine, 'x');
  const TestMarks marks = parse_test_marks(
      "garbage\n"
      "capguard-test-begin\n"
      "capguard-test-begin 10 7\n"            // no node id
      "capguard-test-begin x 7 a\n"           // no time
      "capguard-test-begin 10 8 other-pid\n"  // another process's
      "capguard-test-begin 20 7 good\n"
      "capguard-test-end 30 7 not-the-open-one\n"
      "capguard-test-begin 15 7 back-in-time\n" +
          overlong + "\ncapguard-test-end 40 7 good",
      7);
  CHECK(marks.names == std::vector<std::string>{"good"});
  REQUIRE(marks.spans.size() == 1);
  CHECK(marks.spans[0].begin_ns == 20);
  CHECK(marks.spans[0].end_ns == 40);
  CHECK(parse_test_marks("", 7).names.empty());
}

TEST_CASE("test marks: at most kMaxTests names; the file beside a trace") {
  std::string text;
  for (size_t i = 0; i <= kMaxTests; ++i)
    text += "capguard-test-begin " + std::to_string(i + 1) + " 7 t" + std::to_string(i) + "\n";
  const TestMarks marks = parse_test_marks(text, 7);
  CHECK(marks.names.size() == kMaxTests);
  CHECK_FALSE(marks.test_at(kMaxTests + 5));  // the unnamed one ended the last named one
  CHECK(test_marks_path("/t/capguard.42.trace") == "/t/capguard.42.tests");
  CHECK(test_marks_path("/t/run.log").empty());
  CHECK(read_test_marks("/nonexistent/capguard.1.tests", 1).names.empty());
  CHECK(read_test_marks("/dev/null", 1).names.empty());  // not a regular file
}

}  // namespace capguard
