set -o pipefail
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
(time bash scripts/gpu_integration.sh) > $OUT/integration.log 2>&1; echo "integration rc=$?"
R=/tmp/capguard-testcase-results
echo "testcases: $(grep -c '| PASS' $R/table.txt) PASS, $(grep -c '| FAIL' $R/table.txt) FAIL"
grep '| FAIL' $R/table.txt | cut -c1-300
tail -3 $R/table.txt
grep -E "^real|smoke|exit" $OUT/integration.log | head -20
rm -f $OUT/testcase-results.tgz
tar czf $OUT/results3.tgz -C /tmp capguard-testcase-results
