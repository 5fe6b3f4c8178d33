# The read-only file mapping addon (mmap.c), built by scripts/setup.sh: npm run build:native.
{
  "targets": [
    {
      "target_name": "mmap",
      "sources": ["mmap.c"]
    }
  ]
}
