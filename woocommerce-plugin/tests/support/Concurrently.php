<?php
/**
 * Runs concurrent-worker.php in several PHP processes at once.
 *
 * @package ServicePay\WooCommerce
 */

namespace ServicePay\WooCommerce\Tests\Support;

/**
 * Starts every process, waits until each has loaded WordPress, then releases them at one instant, so their database work overlaps.
 */
final class Concurrently {

	/**
	 * The decoded output line of each process.
	 *
	 * @param int      $count Processes.
	 * @param string[] $args  Worker arguments after the start time.
	 * @param string   $mode  `claim` or `settle`.
	 * @param int      $order_id Order id.
	 * @return array<int,array<string,mixed>>
	 */
	public static function run( int $count, string $mode, int $order_id, array $args ): array {
		$barrier = sys_get_temp_dir() . '/servicepay-barrier-' . bin2hex( random_bytes( 6 ) );
		mkdir( $barrier );
		$procs   = array();
		$pipes    = array();
		for ( $i = 0; $i < $count; $i++ ) {
			$command   = array_merge( array( PHP_BINARY, __DIR__ . '/concurrent-worker.php', $mode, (string) $order_id, $barrier ), $args );
			$procs[ $i ] = proc_open( $command, array( 1 => array( 'pipe', 'w' ), 2 => array( 'pipe', 'w' ) ), $pipes[ $i ] );
		}
		// Release them together once every one has loaded WordPress.
		$deadline = microtime( true ) + 60;
		while ( count( glob( $barrier . '/ready-*' ) ) < $count && microtime( true ) < $deadline ) {
			usleep( 2000 );
		}
		touch( $barrier . '/go' );
		$results = array();
		foreach ( $procs as $i => $proc ) {
			$out = stream_get_contents( $pipes[ $i ][1] );
			$err = stream_get_contents( $pipes[ $i ][2] );
			$rc  = proc_close( $proc );
			$lines = array_values( array_filter( explode( "\n", trim( (string) $out ) ) ) );
			$last  = json_decode( (string) end( $lines ), true );
			if ( 0 !== $rc || ! is_array( $last ) ) {
				throw new \RuntimeException( "worker $i failed (rc $rc): $out $err" );
			}
			$results[] = $last;
		}
		array_map( 'unlink', glob( $barrier . '/*' ) );
		rmdir( $barrier );
		return $results;
	}
}
