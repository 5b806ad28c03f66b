"""Which questions ask for a quantity and which sentences state one (kgrag.agent.quantity), on
questions of the real folders and sentences quoted from real files of this machine (bzip2(1),
xargs(1), savelog(8), zlib's FAQ, PostgreSQL's errcodes.txt, scikit-learn's data set notes)."""

from __future__ import annotations

import pytest

from kgrag.agent.quantity import asks_quantity, states_quantity


@pytest.mark.parametrize(
    "question",
    [
        "How much does a commercial support contract for the Prometheus node exporter cost?",
        "How many instances does the diabetes dataset have?",
        "How long does e2fsck take to check a one terabyte disk?",
        "How old is the author of GNU grep?",
        "What percentage of servers use FreeIPMI?",
        "What is the price of the printed Rust book?",
        # the quantity's noun after a few words, or the unit the answer is asked in
        "What is the default PulseAudio shared memory size in megabytes on macOS?",
        "What was the total population of the town in 1900?",
        "What is the total number of seats in the hall?",
        "How far is the relay station from the coast in kilometres?",
        "What is the cache's limit in megabytes?",
    ],
)
def test_questions_asking_for_a_quantity(question: str) -> None:
    assert asks_quantity(question)


@pytest.mark.parametrize(
    "question",
    [
        "How do I remove a kernel module with modprobe?",
        "What is the ISO 15924 numeric code of the Cyrillic script?",
        "When was Debian 12 bookworm released?",
        "Which port does node_exporter listen on by default?",
        # a question's verb or preposition stands between "what" and the noun
        "What does the size option of mkfs do?",
        "What happens in the number field of the form?",
        "Which files are stored in megabytes of swap?",
        # a number that names a thing counts nothing
        "What is the seal kit number of pump P-12?",
        "What is the serial number of the drive?",
    ],
)
def test_questions_asking_for_no_quantity(question: str) -> None:
    assert not asks_quantity(question)


@pytest.mark.parametrize(
    ("sentence", "question"),
    [
        ("Number of Instances: 442", "How many instances does the diabetes dataset have?"),
        (
            "-c cycle Save cycle versions of the logfile (default: 7).",
            "How many versions of a log file does savelog keep by default?",
        ),
        (
            "Random data (including the output of most file compressors) is coded at about "
            "8.05 bits per byte, giving an expansion of around 0.5%.",
            "How much does bzip2 expand random data?",
        ),
        (
            "# class (the first two characters of the code value identify the class).",
            "How many characters of an SQLSTATE code identify its class?",
        ),
        ("Number of Instances: 1797", "How many instances are in the digits dataset?"),
        # a size in digits or in a unit of size (ssh-keygen(1))
        (
            "For RSA keys, the minimum size is 1024 bits and the default is 3072 bits.",
            "What is the default RSA key size of ssh-keygen?",
        ),
        ("An archive member may hold up to 8 GiB.", "What is the maximum file size tar takes?"),
    ],
)
def test_sentences_stating_a_quantity(sentence: str, question: str) -> None:
    assert states_quantity(sentence, question)


@pytest.mark.parametrize(
    ("sentence", "question"),
    [
        # a URL and a command line
        (
            "git clone https://github.com/prometheus/node_exporter.git cd node_exporter make "
            "build ./node_exporter <flags>",
            "How much does a commercial support contract for the Prometheus node exporter cost?",
        ),
        # a list item's number, a manual section, a code, a version
        ("22. Can I use zlib in my commercial application?", "How much does zlib cost?"),
        ("For details about the options, see createuser(1).", "How many users?"),
        ("40P01 E ERRCODE_T_R_DEADLOCK_DETECTED deadlock_detected", "How many codes?"),
        ("The node_exporter 0.16.0 and newer renamed many metrics.", "How many metrics?"),
        # a number the question writes itself
        (
            'If the compiler\'s "long" type is 64 bits, then the limit is 64 bits.',
            "How much data can zlib count when the compiler's long type is 64 bits?",
        ),
        # a number, but not money for a price, nor a time for "how long"
        ("Exit with the value 4.", "How much does a support contract cost?"),
        (
            "Version number 0 is not compressed because a process might still have file opened.",
            "How long does savelog take to rotate a one gigabyte log file?",
        ),
        ("Date: July; 1998", "How many instances are in the digits dataset?"),
        # a number word is no size (tar(1), quoted for an unanswerable question)
        (
            "Options to GNU tar can be given in three different styles.",
            "What is the maximum file size that tar can archive?",
        ),
    ],
)
def test_sentences_stating_no_quantity(sentence: str, question: str) -> None:
    assert not states_quantity(sentence, question)
