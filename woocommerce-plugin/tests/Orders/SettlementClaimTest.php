<?php
/**
 * @package ServicePay\WooCommerce
 */

namespace ServicePay\WooCommerce\Tests\Orders;

use ServicePay\WooCommerce\Orders\SettlementClaim;
use ServicePay\WooCommerce\Tests\Support\Concurrently;
use ServicePay\WooCommerce\Tests\WordPressTestCase;

require_once __DIR__ . '/../support/Concurrently.php';

/**
 * @group wordpress
 */
final class SettlementClaimTest extends WordPressTestCase {

	public function test_a_key_is_taken_once_and_can_be_given_back(): void {
		$key = 'test:' . wp_generate_password( 12, false );
		$this->assertFalse( SettlementClaim::exists( $key ) );
		$this->assertTrue( SettlementClaim::take( $key, 1 ) );
		$this->assertFalse( SettlementClaim::take( $key, 1 ) );
		$this->assertTrue( SettlementClaim::exists( $key ) );
		SettlementClaim::release( $key );
		$this->assertTrue( SettlementClaim::take( $key, 1 ) );
	}

	public function test_exactly_one_of_eight_concurrent_php_processes_wins(): void {
		$key     = 'race:' . wp_generate_password( 12, false );
		$results = Concurrently::run( 8, 'claim', 1, array( $key ) );
		$this->assertCount( 8, $results );
		$this->assertSame( 1, count( array_filter( $results, static fn ( $r ) => true === $r['won'] ) ) );
		$this->assertTrue( SettlementClaim::exists( $key ) );
	}

	public function test_an_abandoned_claim_is_taken_over_once_and_a_fresh_one_never(): void {
		global $wpdb;
		$key = 'stale:' . wp_generate_password( 12, false );
		$this->assertTrue( SettlementClaim::take( $key, 1 ) );
		$this->assertFalse( SettlementClaim::take_over_stale( $key, 1, 120 ) );
		// The holder died three minutes ago.
		$wpdb->update( SettlementClaim::table(), array( 'created_at' => gmdate( 'Y-m-d H:i:s', time() - 180 ) ), array( 'claim_key' => $key ) );
		$this->assertTrue( SettlementClaim::take_over_stale( $key, 1, 120 ) );
		$this->assertFalse( SettlementClaim::take_over_stale( $key, 1, 120 ) );
		$this->assertFalse( SettlementClaim::take( $key, 1 ) );
	}
}
