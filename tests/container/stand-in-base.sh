#!/usr/bin/env bash
# A local stand-in for the Dockerfile's base (python:3.11-slim-bookworm), where Docker Hub can't be
# reached: Debian bookworm (debootstrap --variant=minbase) with the runtime libraries the official
# slim image carries, and this machine's CPython 3.11 in /usr/local as the official image has it
# (pip from its ensurepip, nothing else in site-packages). The machine's extra CA certificates come
# along (the system bundle, and pip's `cert`), so the build's downloads verify as they do here.
#   usage: stand-in-base.sh TAG CACHE_DIR     (the rootfs is kept in CACHE_DIR between runs)
set -euo pipefail
tag=$1
cache=$2
rootfs="$cache/rootfs"
python_prefix="$(python3.11 -c 'import sys; print(sys.base_prefix)')"
version="$(python3.11 -c 'import sys; print("%d.%d" % sys.version_info[:2])')"
if [ ! -x "$rootfs/usr/local/bin/python3" ]; then
    rm -rf "$rootfs"
    mkdir -p "$cache"
    debootstrap --variant=minbase \
        --include=ca-certificates,libssl3,libffi8,libsqlite3-0,libbz2-1.0,liblzma5,zlib1g,libncursesw6,libreadline8,libuuid1,libgdbm6,libexpat1,tzdata,netbase \
        bookworm "$rootfs" http://deb.debian.org/debian >"$cache/debootstrap.log"
    mkdir -p "$rootfs/usr/local/lib" "$rootfs/usr/local/bin" "$rootfs/usr/local/include"
    cp -a "$python_prefix"/lib/libpython3* "$rootfs/usr/local/lib/"
    cp -a "$python_prefix/include/." "$rootfs/usr/local/include/"
    tar -C "$python_prefix/lib" -c --exclude="python$version/site-packages/*" --exclude='__pycache__' \
        --exclude="python$version/test" "python$version" | tar -x -C "$rootfs/usr/local/lib"
    cp -a "$python_prefix/bin/python$version" "$rootfs/usr/local/bin/"
    ln -sf "python$version" "$rootfs/usr/local/bin/python3"
    ln -sf "python$version" "$rootfs/usr/local/bin/python"
    chroot "$rootfs" ldconfig
    chroot "$rootfs" "/usr/local/bin/python$version" -m ensurepip --default-pip >/dev/null 2>&1
fi
# What makes Debian's official images small (debuerreotype's minimizing config and its "slim"
# variant, which python:3.11-slim-bookworm is built on): apt keeps no .deb, no package cache and no
# translations; dpkg installs no documentation, man pages or locales (copyright files stay). Without
# it, a Dockerfile's `apt-get install` layer here would carry ~130 MB the real build doesn't.
cat >"$rootfs/etc/apt/apt.conf.d/docker-clean" <<'CONF'
DPkg::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };
APT::Update::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };
Dir::Cache::pkgcache "";
Dir::Cache::srcpkgcache "";
CONF
echo 'Acquire::GzipIndexes "true";' >"$rootfs/etc/apt/apt.conf.d/docker-gzip-indexes"
echo 'Acquire::Languages "none";' >"$rootfs/etc/apt/apt.conf.d/docker-no-languages"
echo 'Apt::AutoRemove::SuggestsImportant "false";' >"$rootfs/etc/apt/apt.conf.d/docker-autoremove-suggests"
echo 'force-unsafe-io' >"$rootfs/etc/dpkg/dpkg.cfg.d/docker-apt-speedup"
slim=(/usr/share/doc /usr/share/groff /usr/share/info /usr/share/linda /usr/share/lintian/overrides /usr/share/locale /usr/share/man)
{
    for dir in "${slim[@]}"; do echo "path-exclude $dir/*"; done
    echo 'path-include /usr/share/doc/*/copyright'
} >"$rootfs/etc/dpkg/dpkg.cfg.d/docker"
for dir in "${slim[@]}"; do
    [ -d "$rootfs$dir" ] && find "$rootfs$dir" -mindepth 1 \( -type f -o -type l \) ! -path "$rootfs/usr/share/doc/*/copyright" -delete
done
rm -rf "$rootfs"/var/cache/apt/*.bin "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/lib/apt/lists/*
cp /etc/ssl/certs/ca-certificates.crt "$rootfs/etc/ssl/certs/ca-certificates.crt"
printf '[global]\ncert = /etc/ssl/certs/ca-certificates.crt\n' >"$rootfs/etc/pip.conf"
tar -C "$rootfs" -c . | docker import \
    --change "LABEL org.toolselect.stand-in=$(sha256sum "${BASH_SOURCE[0]}" | cut -c1-16)" \
    --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    --change 'ENV LANG=C.UTF-8' --change 'CMD ["python3"]' - "$tag" >/dev/null
