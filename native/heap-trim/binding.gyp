# The heap-trim addon (heap-trim.c), built by scripts/setup.sh: npm run build:native.
{
  "targets": [
    {
      "target_name": "heap_trim",
      "sources": ["heap-trim.c"]
    }
  ]
}
