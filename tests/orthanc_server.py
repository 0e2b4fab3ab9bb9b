"""A throwaway Orthanc with its DICOMweb plugin (Debian's orthanc and orthanc-dicomweb),
on free ports in a fresh folder, behind HTTP Basic authentication like a hospital's PACS."""

import json
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path

import requests

PLUGIN = Path("/usr/share/orthanc/plugins/libOrthancDicomWeb.so")
USER, PASSWORD = "medbanana", "orthanc-test-password"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class OrthancServer:
    def __init__(self) -> None:
        binary = shutil.which("Orthanc")
        if binary is None or not PLUGIN.exists():
            raise FileNotFoundError("Orthanc and its DICOMweb plugin (apt-get install orthanc "
                                    "orthanc-dicomweb)")
        self.binary = binary
        self.base = Path(tempfile.mkdtemp(prefix="medbanana-orthanc-"))
        self.port = _free_port()
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def dicomweb(self) -> str:
        return f"{self.url}/dicom-web"

    def start(self) -> None:
        config = {"Name": "medbanana-test", "StorageDirectory": str(self.base / "db"),
                  "IndexDirectory": str(self.base / "db"), "HttpPort": self.port,
                  "DicomPort": _free_port(), "RemoteAccessAllowed": False,
                  "AuthenticationEnabled": True, "RegisteredUsers": {USER: PASSWORD},
                  "Plugins": [str(PLUGIN)], "DicomWeb": {"Enable": True, "Root": "/dicom-web/"}}
        (self.base / "config.json").write_text(json.dumps(config))
        self.process = subprocess.Popen([self.binary, str(self.base / "config.json")],
                                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                if requests.get(f"{self.url}/system", auth=(USER, PASSWORD), timeout=1).ok:
                    return
            except requests.ConnectionError:
                pass
            if self.process.poll() is not None:
                raise OSError(f"Orthanc exited with {self.process.returncode}")
            time.sleep(0.1)
        raise OSError("Orthanc did not answer within 30 s")

    def instances(self) -> int:
        found = requests.get(f"{self.url}/statistics", auth=(USER, PASSWORD), timeout=10).json()
        return int(found["CountInstances"])

    def delete(self, sop_instance_uid: str) -> None:
        [found] = requests.post(f"{self.url}/tools/lookup", data=sop_instance_uid,
                                auth=(USER, PASSWORD), timeout=10).json()
        requests.delete(f"{self.url}/instances/{found['ID']}", auth=(USER, PASSWORD),
                        timeout=10).raise_for_status()

    def stop(self) -> None:
        if self.process is not None:
            self.process.terminate()
            self.process.wait(timeout=30)
        shutil.rmtree(self.base, ignore_errors=True)
