"""The registry of the real data sets: where each file comes from, its size and its hash.

Every data set Hedgerow reads is public and pinned: a repository at one commit, each file's
path there, its size and SHA-256 as Hedgerow stores it (the table below is the project's copy
of the data manifest).  Two sets are stored gzipped although their source is plain text; for
those the registry also gives the SHA-256 of the content, so a file fetched from the source
and compressed here is verified by what it contains.

Examples
--------
>>> ds = dataset("cities")
>>> ds.folder, len(ds.files), ds.files[0].name
('wondernetwork-pings-2020-07-19', 2, 'servers-2020-07-19.csv')
>>> dataset("snap-ego-facebook").name      # the folder name is an alias
'facebook'
>>> dataset("nosuch")  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
hedgerow.errors.DataError: unknown data set 'nosuch'; known: cities, facebook, google-churn, ...
"""

from __future__ import annotations

from dataclasses import dataclass

from hedgerow.errors import DataError

__all__ = ["DATASETS", "DataFile", "Dataset", "dataset", "dataset_of_folder"]


@dataclass(frozen=True)
class DataFile:
    """One file of a data set.

    Attributes
    ----------
    name : str
        File name as stored (in the data set's folder).
    source_path : str
        Path of the file in the source repository at the pinned commit.
    size : int
        Bytes as stored.
    sha256 : str
        SHA-256 of the file as stored.
    gzip_source : bool
        The source holds the plain file; Hedgerow stores it gzipped.
    content_sha256 : str
        SHA-256 of the uncompressed content (``gzip_source`` files; also verifies a file that
        was compressed here rather than copied).
    """

    name: str
    source_path: str
    size: int
    sha256: str
    gzip_source: bool = False
    content_sha256: str = ""


@dataclass(frozen=True)
class Dataset:
    """A data set: a folder of files from one repository at one commit.

    Attributes
    ----------
    name : str
        Short name (``hedgerow data fetch NAME``).
    folder : str
        Folder name, the same in every data folder (also accepted as a name).
    title, used_for, licence, citation : str
        What it is, which worlds read it, its terms, whom to cite.
    repository, commit : str
        The public source (``owner/name`` on GitHub) and the commit the files are taken at.
    files : tuple of DataFile
    """

    name: str
    folder: str
    title: str
    used_for: str
    repository: str
    commit: str
    licence: str
    citation: str
    files: tuple[DataFile, ...]

    def url(self, f: DataFile) -> str:
        """The source URL of ``f`` at the pinned commit."""
        return f"https://raw.githubusercontent.com/{self.repository}/{self.commit}/{f.source_path}"

    @property
    def size(self) -> int:
        """Bytes of all files as stored."""
        return sum(f.size for f in self.files)


DATASETS: dict[str, Dataset] = {
    d.name: d
    for d in (
        Dataset(
            "cities",
            "wondernetwork-pings-2020-07-19",
            "WonderNetwork pings between 246 cities, 2020-07-19/20, grouped per pair",
            "cities latency (Topiary, Goldfish goldfish-real), hedgerow ingest cities",
            "sm86/geo-latency-data",
            "ad13da0f2aede93ae255a81cf6ab017f441d30ce",
            "no licence stated; upstream WonderNetwork/WonderProxy public release",
            "WonderNetwork / WonderProxy, 'A day in the life of the internet' (2020)",
            (
                DataFile("servers-2020-07-19.csv", "servers-2020-07-19.csv", 18668,
                         "41a0429e577943a5731ccc2d576aaa38b01cc7ec4eb87adf48f242068370467c"),
                DataFile("pings-2020-07-19-2020-07-20-grouped.csv",
                         "pings-2020-07-19-2020-07-20-grouped.csv", 2948677,
                         "67ffee9718013a434d386562196ce1f932dab9159d617744280e7e0e1d4a67a4"),
            ),
        ),
        Dataset(
            "facebook",
            "snap-ego-facebook",
            "SNAP ego-Facebook friendship graph (4,039 users, 88,234 edges)",
            "social workloads (hedgerow ingest social, fb1k and the OMen worlds)",
            "AllenDowney/ThinkComplexity2",
            "f0417b35ca269e312bf0c950d07fe3c5aa7b3dea",
            "SNAP data, free for research use with citation",
            "J. McAuley and J. Leskovec, Learning to Discover Social Circles in Ego Networks, "
            "NIPS 2012",
            (
                DataFile("facebook_combined.txt.gz", "data/facebook_combined.txt.gz", 218575,
                         "7cc432d08910b3a940ce90f7da94c13aaf048b04724eafcdf3050b28acc49daf"),
            ),
        ),
        Dataset(
            "reed98",
            "facebook100-reed98",
            "Facebook100 Reed College graph (962 users, 18,812 edges)",
            "small social samples in tests",
            "delimitrou/DeathStarBench",
            "6ecb09706140f8730b5385c08f1386c654c3c526",
            "repository Apache-2.0; data from networkrepository.com (cite)",
            "R. Rossi and N. Ahmed, The Network Data Repository, AAAI 2015; "
            "A. Traud, P. Mucha, M. Porter, Social structure of Facebook networks, 2012",
            tuple(
                DataFile(name, f"socialNetwork/datasets/social-graph/socfb-Reed98/{name}", size, h)
                for name, size, h in (
                    ("socfb-Reed98.edges", 146967,
                     "ad6861fc9c27cfa77a865614454e5836988277a84889232acdb1fd1e0f557300"),
                    ("socfb-Reed98.nodes", 3,
                     "084917af148384c1e8396addcec2fca2a9f2c3918cad9676e12cdaad7dc7dfb2"),
                    ("readme.html", 2407,
                     "a98e26078d3660a4ec7479af5577cde8bba6686fb1697008f6da646dedf74bdc"),
                )
            ),
        ),
        Dataset(
            "google-churn",
            "google-clusterdata-2011-machine-events",
            "Google cluster trace 2011, machine_events (12,583 machines, 29 days)",
            "churn traces (hedgerow ingest churn, fb1k-google, tw*-google)",
            "m2mosig-atatrid/Spark-project",
            "d542f0e74bdf7b2bff56e2fdf30a2acc7dbf5692",
            "CC-BY 4.0",
            "C. Reiss, J. Wilkes, J. Hellerstein, Google cluster-usage traces: format + schema, "
            "2011",
            (
                DataFile("part-00000-of-00001.csv.gz",
                         "data/machine_events/part-00000-of-00001.csv.gz", 347211,
                         "fc44b8d2b33a96a261382488789855be7a0ce338888c99930ff45cb592249664"),
            ),
        ),
        Dataset(
            "smartphone-churn",
            "stunner-smartphone-churn-golf",
            "STUNner smartphone session traces (776 users, one week each)",
            "churn traces (hedgerow ingest churn --source smartphone)",
            "ormandi/Gossip-Learning-Framework",
            "9f9d37f9bbcaee28e9c35ba0e1a975be8451251c",
            "no licence stated (cite)",
            "A. Berta, V. Bilicki, M. Jelasity, Defining and understanding smartphone churn "
            "over the internet, IEEE P2P 2014",
            (
                DataFile("peersim_session_100.txt.gz", "res/trace/peersim_session_100.txt",
                         1119163,
                         "1365d4e153187c9e03544b766e0d5f1d186ca3a9f1fbd23ba2ed764821d6d656",
                         gzip_source=True,
                         content_sha256="a501fe6e281cf267eeed6506f065211e2a3e7cd125fa73b6d58c66995e90a057"),
                DataFile("peersim_session_80.txt.gz", "res/trace/peersim_session_80.txt",
                         1554438,
                         "c6ef1e97415535a2a59b97f26ce9acbbdbe858e7bbdb1cb678a2d549c6a9865f",
                         gzip_source=True,
                         content_sha256="e10857c5f01e7656719206a1056fd2f3b1a2162a096254dd42f05aa011725f86"),
            ),
        ),
        Dataset(
            "perigee",
            "perigee-latency-weight1",
            "Perigee's 1000-node one-way latency matrix (iPlane-derived 'weight1')",
            "perigee latency (perigee-matrix), hedgerow ingest perigee",
            "evangelos-kolyvas/blocknet",
            "b0908969c58324ef1bfc14c1e62a0a11258526f2",
            "no licence stated (cite)",
            "Y. Mao, S. Deb, S. Bojja Venkatakrishnan, S. Kannan, K. Srinivasan, Perigee: "
            "Efficient Peer-to-Peer Network Design for Blockchains, PODC 2020",
            (
                DataFile("perigee_latencies_weight1_oneway.dat.gz",
                         "latencies/perigee_latencies_weight1_oneway.dat", 815439,
                         "369ecc36266b52c881d439fe375eae8f28d8d4f5b03ae52c419cf8449fc81b76",
                         gzip_source=True,
                         content_sha256="fe4362cac41405fa96cde57234284197e8a0ef1ba2ab9caaf57ac24c9275facc"),
            ),
        ),
    )
}


def dataset(name: str) -> Dataset:
    """The data set called ``name`` (short name or folder name)."""
    if name in DATASETS:
        return DATASETS[name]
    for d in DATASETS.values():
        if d.folder == name:
            return d
    raise DataError(f"unknown data set {name!r}; known: {', '.join(sorted(DATASETS))}")


def dataset_of_folder(folder: str) -> Dataset | None:
    """The data set stored in ``folder``, or ``None``."""
    for d in DATASETS.values():
        if d.folder == folder:
            return d
    return None
