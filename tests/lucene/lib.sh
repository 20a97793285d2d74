# Shared by the scripts that run Apache Lucene 8 (sourced, not run).

# check_args USAGE COUNTS ARGS... : exits with status 2 and "usage: SCRIPT USAGE" unless the
# number of ARGS is one of COUNTS (a space-separated list), or if the first (the seed) is not
# an integer.
check_args() {
    local usage=$1 counts=" $2 "
    shift 2
    if [[ $counts != *" $# "* ]]; then
        echo "usage: $0 $usage" >&2
        exit 2
    fi
    if ! [[ $1 =~ ^-?[0-9]+$ ]]; then
        echo "error: SEED must be an integer, got '$1'" >&2
        exit 2
    fi
}

# Sets LUCENE_CORE_JAR to a lucene-core 8.x jar (as given, or Debian's liblucene8-java), and
# checks for a JDK; exits with a clear message if either is missing.
find_lucene() {
    for tool in java javac; do
        if ! command -v "$tool" >/dev/null 2>&1; then
            echo "error: '$tool' not found; install a JDK (e.g. apt-get install openjdk-17-jdk-headless)" >&2
            exit 1
        fi
    done
    local jar=${LUCENE_CORE_JAR:-}
    if [[ -z $jar ]]; then
        for candidate in /usr/share/java/lucene-core-8*.jar /usr/share/java/lucene-core.jar; do
            if [[ -f $candidate ]]; then
                jar=$candidate
                break
            fi
        done
    fi
    if [[ -z $jar || ! -f $jar ]]; then
        echo "error: lucene-core 8.x jar not found (looked in /usr/share/java/lucene-core-8*.jar)." >&2
        echo "       Install the Debian package 'liblucene8-java' (apt-get install liblucene8-java)," >&2
        echo "       or set LUCENE_CORE_JAR=/path/to/lucene-core-8.x.jar" >&2
        exit 1
    fi
    LUCENE_CORE_JAR=$jar
}

# Compiles the Java sources given into a fresh folder; prints the folder.
compile_java() {
    local classes
    classes=$(mktemp -d "${TMPDIR:-/tmp}/lucene-java.XXXXXX")
    javac -nowarn -encoding UTF-8 -cp "$LUCENE_CORE_JAR" -d "$classes" "$@"
    echo "$classes"
}
