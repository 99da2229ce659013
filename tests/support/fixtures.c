/*
 * fixtures.c - the package-manager fixtures of fixtures.h.
 */
#include "tests/support/fixtures.h"

#include <stdio.h>
#include <stdlib.h>

#include "tests/support/testlib.h"

/* argv: dir, npm_base, pip greeting, npm greeting. Deterministic output
 * (fixed timestamps), so two runs give the same hashes. */
static const char pkg_script[] =
	"import base64, hashlib, io, json, os, sys, tarfile, zipfile\n"
	"root, npm_base, pip_greeting, npm_greeting = sys.argv[1:5]\n"
	"def put(rel, data):\n"
	"    path = os.path.join(root, rel)\n"
	"    os.makedirs(os.path.dirname(path), exist_ok=True)\n"
	"    with open(path, 'wb') as f: f.write(data)\n"
	"# The wheel: a zip with the module and its dist-info.\n"
	"files = {\n"
	"    'pvdemo/__init__.py': ('GREETING = %r\\n' % pip_greeting).encode(),\n"
	"    'pvdemo-1.0.0.dist-info/METADATA':\n"
	"        b'Metadata-Version: 2.1\\nName: pvdemo\\nVersion: 1.0.0\\nSummary: passavant test package\\n',\n"
	"    'pvdemo-1.0.0.dist-info/WHEEL':\n"
	"        b'Wheel-Version: 1.0\\nGenerator: passavant-tests\\nRoot-Is-Purelib: true\\nTag: py3-none-any\\n',\n"
	"    'pvdemo-1.0.0.dist-info/top_level.txt': b'pvdemo\\n',\n"
	"}\n"
	"record = ''\n"
	"for name, data in files.items():\n"
	"    h = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b'=').decode()\n"
	"    record += '%s,sha256=%s,%d\\n' % (name, h, len(data))\n"
	"record += 'pvdemo-1.0.0.dist-info/RECORD,,\\n'\n"
	"files['pvdemo-1.0.0.dist-info/RECORD'] = record.encode()\n"
	"buf = io.BytesIO()\n"
	"with zipfile.ZipFile(buf, 'w', zipfile.ZIP_DEFLATED) as z:\n"
	"    for name, data in files.items():\n"
	"        z.writestr(zipfile.ZipInfo(name, (2020, 1, 1, 0, 0, 0)), data)\n"
	"whl = buf.getvalue()\n"
	"wname = 'pvdemo-1.0.0-py3-none-any.whl'\n"
	"put('packages/' + wname, whl)\n"
	"put('simple/index.html', b'<!DOCTYPE html>\\n<html><body><a href=\"pvdemo/\">pvdemo</a></body></html>\\n')\n"
	"put('simple/pvdemo/index.html', ('<!DOCTYPE html>\\n<html><body><a href=\"/packages/%s#sha256=%s\">%s</a>'\n"
	"    '</body></html>\\n' % (wname, hashlib.sha256(whl).hexdigest(), wname)).encode())\n"
	"# The npm package: a gzipped tar of package/, and its packument.\n"
	"pkg = {'name': 'pvnpmdemo', 'version': '1.0.0', 'main': 'index.js', 'license': 'MIT'}\n"
	"members = {\n"
	"    'package/package.json': json.dumps(pkg, indent=2).encode() + b'\\n',\n"
	"    'package/index.js': ('module.exports = %s;\\n' % json.dumps(npm_greeting)).encode(),\n"
	"}\n"
	"raw = io.BytesIO()\n"
	"with tarfile.open(fileobj=raw, mode='w', format=tarfile.USTAR_FORMAT) as t:\n"
	"    for name, data in members.items():\n"
	"        ti = tarfile.TarInfo(name); ti.size = len(data); ti.mode = 0o644; ti.mtime = 1577836800\n"
	"        t.addfile(ti, io.BytesIO(data))\n"
	"import gzip\n"
	"tgz = gzip.compress(raw.getvalue(), mtime=0)\n"
	"tname = 'pvnpmdemo-1.0.0.tgz'\n"
	"put('pvnpmdemo/-/' + tname, tgz)\n"
	"version = dict(pkg)\n"
	"version['_id'] = 'pvnpmdemo@1.0.0'\n"
	"version['dist'] = {\n"
	"    'tarball': npm_base + 'pvnpmdemo/-/' + tname,\n"
	"    'shasum': hashlib.sha1(tgz).hexdigest(),\n"
	"    'integrity': 'sha512-' + base64.b64encode(hashlib.sha512(tgz).digest()).decode(),\n"
	"}\n"
	"doc = {'_id': 'pvnpmdemo', 'name': 'pvnpmdemo', 'dist-tags': {'latest': '1.0.0'},\n"
	"       'versions': {'1.0.0': version}}\n"
	"put('pvnpmdemo/index.json', json.dumps(doc, indent=2).encode() + b'\\n')\n";

int test_pkg_fixtures(const char *python, const char *dir, const char *npm_base)
{
	char *argv[] = {(char *)python, "-c", (char *)pkg_script, (char *)dir, (char *)npm_base,
			TEST_PIP_GREETING, TEST_NPM_GREETING, NULL};
	char *err = NULL;
	int rc = test_run_capture(argv, NULL, &err, 60000);

	if (rc != 0)
		fprintf(stderr, "fixtures: %s (package fixtures into %s) exited %d:\n%s\n", python, dir, rc,
			err != NULL ? err : "");
	free(err);
	return rc == 0 ? 0 : -1;
}
