/*
 * fixtures.h - package-manager fixtures served as static files (pv-upstream
 * --files DIR): a PEP 503 simple index with one pure-python wheel and an
 * npm registry tree with one package, made at test time (no binary files
 * in the tree) by a short Python script (zipfile, tarfile, hashlib).
 *
 * test_pkg_fixtures(python, dir, npm_base) writes into the existing
 * directory dir:
 *   simple/index.html                       the project list (pvdemo)
 *   simple/pvdemo/index.html                one link, with #sha256=
 *   packages/pvdemo-1.0.0-py3-none-any.whl  pvdemo/__init__.py with
 *                                           GREETING = TEST_PIP_GREETING;
 *                                           dist-info METADATA, WHEEL,
 *                                           RECORD (hashes and sizes)
 *   pvnpmdemo/index.json                    the packument: dist.tarball is
 *                                           npm_base + "pvnpmdemo/-/...",
 *                                           dist.shasum (SHA-1 hex) and
 *                                           dist.integrity (sha512-base64)
 *                                           of the tarball
 *   pvnpmdemo/-/pvnpmdemo-1.0.0.tgz         package/package.json and
 *                                           package/index.js, which exports
 *                                           TEST_NPM_GREETING
 * pv-upstream --files serves a directory's index.html, else index.json,
 * so pip's /simple/pvdemo/ and npm's /pvnpmdemo both resolve.
 *
 * python is an interpreter path (any Python 3); npm_base is the registry's
 * URL with its trailing slash ("https://npm.test:PORT/"). Returns 0, or -1
 * with the script's error on stderr.
 */
#ifndef PASSAVANT_TEST_FIXTURES_H
#define PASSAVANT_TEST_FIXTURES_H

#define TEST_PIP_GREETING "hello from pvdemo"
#define TEST_NPM_GREETING "hello from pvnpmdemo"

int test_pkg_fixtures(const char *python, const char *dir, const char *npm_base);

#endif
