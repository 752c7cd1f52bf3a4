"""One Spark session for the whole test run (starting Spark takes ~10 s).

Its master is ``$PRIVGRAPH_SPARK_MASTER`` if set (CI sets ``local-cluster[2,1,1024]``: two
worker JVMs, so that closures, broadcasts and results cross process boundaries), else
``local[2]``.
"""

import importlib.util
import os

import pytest

HAS_PYSPARK = importlib.util.find_spec("pyspark") is not None
requires_spark = pytest.mark.skipif(not HAS_PYSPARK, reason="pyspark is not installed (pip install 'privgraph[spark]')")


@pytest.fixture(scope="session")
def spark():
    if not HAS_PYSPARK:
        pytest.skip("pyspark is not installed (pip install 'privgraph[spark]')")
    from pyspark.sql import SparkSession

    session = (
        SparkSession.builder.master(os.environ.get("PRIVGRAPH_SPARK_MASTER") or "local[2]")
        .appName("privgraph-tests")
        .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.sql.execution.arrow.pyspark.enabled", "true")
        .config("spark.driver.memory", "1g")
        .config("spark.sql.adaptive.enabled", "false")
        .config("spark.sql.codegen.wholeStage", "false")
        .config("spark.driver.extraJavaOptions", "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC")
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()
